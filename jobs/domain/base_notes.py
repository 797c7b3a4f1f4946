"""The progress card's lines about the base branch (jobs/domain/notes.py `render_card`): its
merges and a move not looked at yet. The rest of the base's texts are the base_moves feature's
(jobs/features/base_moves/texts.py); these stay here while the card takes no feature's lines."""

from __future__ import annotations

from jobs.domain.job import Job
from jobs.domain.note_parts import short
from jobs.domain.records import BaseMerge


def merge_summary(merge: BaseMerge) -> str:
    """One line: which base commit, the merge commit, who resolved it and what was replayed."""
    text = f"base `{short(merge.base_sha)}` merged in `{short(merge.commit)}`"
    if merge.by == "human":
        text += " (conflict resolved by a maintainer)"
    if merge.replayed:
        text += "; replayed " + "; ".join(f"batch {r.batch} ({r.reason})" for r in merge.replayed)
    if merge.found:
        text += " (found on the branch after an interrupted worker)"
    if merge.commands:
        failed = [c for c in merge.commands if c.exit_code != 0 or c.timed_out]
        text += "; validation " + ("failed" if failed else "passed")
    return text


def base_merge_card(job: Job) -> list[str]:
    """The progress card's lines about the base: its merges, and a move not looked at yet."""
    lines = []
    if job.base_merges:
        lines += ["", f"Base `{job.base_branch}` merged {len(job.base_merges)} time(s); last: "
                  + merge_summary(job.base_merges[-1])]
    if job.base_moved_at is not None and job.gate is not None:
        lines += ["", f"`{job.base_branch}` moved at {job.base_moved_at:%Y-%m-%d %H:%M}Z; it is "
                  f"looked at when the job goes on (update_from_base: "
                  f"{job.config.update_from_base})."]
    return lines
