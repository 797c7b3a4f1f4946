"""Pure renderers of the base branch's merges: the merge commit's message, the change note's
"Base merges" section, the progress card's lines, the `conflict` gate's reasons and local
mode's notice of a moved base."""

from __future__ import annotations

import re

from jobs.basics import markdown_safe as md
from jobs.features.base_moves.record import BaseMerge, moves
from jobs.features.base_moves.rules import BaseDecision, resolve_commands
from jobs.kernel import trailers
from jobs.kernel.job import Job
from jobs.notes.note_parts import command_line, short


def merge_message(job: Job, base_sha: str, decision: BaseDecision) -> str:
    """`stepwise(#N): merge <base> (<short sha>)`, what was replayed, and the trailers."""
    body = "\n".join(f"Replayed batch {r.batch}: {r.reason}." for r in decision.replays)
    return (f"stepwise(#{job.number}): merge {job.base_branch} ({base_sha[:7]})\n\n"
            + (f"{body}\n\n" if body else "")
            + trailers.trailer_lines((trailers.JOB, job.id), (trailers.BASE_MERGE, base_sha)))


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


def base_merge_note(job: Job) -> list[str]:
    """The change note's "Base merges" section (empty when the base was never merged)."""
    if not moves(job).merges:
        return []
    lines = ["", "## Base merges", "",
             "Merge commits of the moved base branch: never batches, never reverted.", ""]
    for merge in moves(job).merges:
        lines.append(f"- {merge_summary(merge)}")
        lines += [f"  - replay of batch {r.batch}: {command_line(c)}"
                  for r in merge.replayed for c in r.commands]
        lines += [f"  - {command_line(c)}" for c in merge.commands]
    return lines


def base_merge_card(job: Job) -> list[str]:
    """The progress card's lines about the base: its merges, and a move not looked at yet."""
    lines = []
    if moves(job).merges:
        lines += ["", f"Base `{job.base_branch}` merged {len(moves(job).merges)} time(s); last: "
                  + merge_summary(moves(job).merges[-1])]
    if moves(job).moved_at is not None and job.gate is not None:
        lines += ["", f"`{job.base_branch}` moved at {moves(job).moved_at:%Y-%m-%d %H:%M}Z; it is "
                  f"looked at when the job goes on (update_from_base: "
                  f"{job.config.update_from_base})."]
    return lines


def conflict_reason(job: Job, decision: BaseDecision, *, local: bool) -> str:
    """The `conflict` gate's reason: the files, and the commands that resolve it."""
    files = "\n".join(f"- {md.code(item)}" for item in decision.unreplayable)
    commands = resolve_commands(branch=job.branch, base_branch=job.base_branch, local=local)
    return (f"{decision.reason}:\n{files}\n\nResolve it on the branch with a merge "
            f"(never a rebase or a force push):\n{md.block(commands)}\nthen approve")


_REFUSAL = re.compile(r"refusing to allow a GitHub App to create or update workflow[^\n)]*")


def workflow_refused_reason(job: Job, base_sha: str, files: list[str], message: str) -> str:
    """The `conflict` gate's reason when GitHub refused the merge because it changes workflow
    files and the App lacks `workflows: write`: what GitHub said, the files, and the commands
    that merge it by hand (a person's push may change workflows)."""
    said = _REFUSAL.search(message)
    quoted = said.group(0).strip() if said else message.strip()[-300:]
    listed = "\n".join(f"- {md.code(path)}" for path in files) or "- (workflow files)"
    commands = (f"git fetch origin\ngit switch {job.branch}\n"
                f"git merge origin/{job.base_branch}\ngit push origin {job.branch}")
    return (f"GitHub refused the merge of {md.code(job.base_branch)} ({base_sha[:7]}) into "
            f"{md.code(job.branch)}: it changes workflow files, and the App has no "
            f"`workflows: write` permission (GitHub: {md.message(quoted)}):\n{listed}\n\n"
            "Merge it on the branch by hand (never a rebase or a force push):\n"
            f"{md.block(commands)}\n(or press **Update branch** on the pull request: GitHub "
            "signs that merge, which a base requiring signed commits needs), then approve; or "
            "have an owner grant the App `workflows: write` in its installation settings, then "
            "approve to merge it again")


def moved_notice(job: Job, base_sha: str) -> str:
    """What local mode says when a waiting job's base moved since the branch last took it in."""
    return (f"`{job.base_branch}` moved to {base_sha[:7]} since `{job.branch}` last took it "
            f"in; it is looked at when the job goes on (update_from_base: "
            f"{job.config.update_from_base})")
