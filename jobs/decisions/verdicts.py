"""Pure verdicts from evidence: the final review's, and a revert's (whether and what it did).

The engine gathers the evidence (git, the sandbox) and applies these (jobs/engine/review.py,
jobs/engine/revert.py); nothing here runs a command.
"""

from __future__ import annotations

from collections.abc import Sequence

from jobs.basics import markdown_safe as md
from jobs.basics.errors import ErrorInfo, RetryClass
from jobs.kernel.gates import RefusedError
from jobs.kernel.job import Batch, Job
from jobs.kernel.model import FINISHED_BATCH_STATUSES, BatchStatus, JobStatus
from jobs.kernel.records import CommandEvidence, FinalReview


def judge_review(job: Job, *, base_now: str, merges: bool, commands: Sequence[CommandEvidence],
                 failure: CommandEvidence | None, setup_failed: bool = False,
                 leftovers: Sequence[str] = ()) -> FinalReview:
    """The final review from its evidence: the base it merged with, whether the merge was clean,
    the setup and validation commands run (`failure`: the one that failed), the leftovers."""
    problems: list[str] = []
    if not merges:
        problems.append(f"the branch does not merge cleanly with `{job.base_branch}`")
    elif setup_failed:
        problems.append("a setup command failed")
    elif failure is not None:
        problems.append(f"`{failure.display}` exited {failure.exit_code}")
    unfinished = [b.number for b in job.batches if b.status not in FINISHED_BATCH_STATUSES]
    return FinalReview(merged_with_base=base_now, commands=list(commands),
                       ok=not problems and not unfinished, leftovers=list(leftovers),
                       unfinished_batches=unfinished)


def review_gate_report(review: FinalReview, *, accepted: bool) -> ErrorInfo | None:
    """None: the job completes; else the failure gate's report (a human's `approve` accepts)."""
    if review.ok or accepted:
        return None
    failing = [c for c in review.commands if c.exit_code != 0 or c.timed_out]
    tail = failing[-1].output_tail if failing else ""
    return ErrorInfo(
        code="final_review_failed", retry_class=RetryClass.NEEDS_HUMAN,
        message="validation of the branch merged with the current base failed"
        if failing else "the branch does not merge cleanly with the base",
        hint="push a fix to the branch and {{retry}}, or {{approve}} to finish anyway",
        evidence={"output_tail": tail},
    )


def revert_refusal(job: Job, foreign: Sequence[str]) -> RefusedError | None:
    """Why the job cannot take a revert now (it is working, or the branch has others' commits)."""
    # A milestone waiting for CI holds no worker: like a gate, it may take a revert (a batch's
    # candidate waiting for CI may not: the revert would land on a commit that may be withdrawn).
    awaited = job.awaited() if job.waiting_outside else None
    waits = awaited is not None and awaited.revertible
    if job.status in (JobStatus.RUNNING, JobStatus.PLANNING, JobStatus.CANCEL_REQUESTED) \
            and not waits:
        return RefusedError(f"the job is {job.status}; a batch can be reverted only while it "
                            "waits", hint="wait for the next gate, then revert")
    if foreign:
        return RefusedError(
            f"someone else changed `{job.branch}` ({'; '.join(foreign[:3])}); reverting now "
            "could undo their work", hint="let the job take their commits in first ({{approve}} "
            "at the human_commit gate), then revert", code="branch_changed")
    return None


def batch_refusal(batch: Batch) -> RefusedError | None:
    """Why `batch` cannot be reverted (only a committed batch can)."""
    if batch.status is not BatchStatus.COMPLETED or batch.commit is None:
        return RefusedError(f"batch {batch.number} is {batch.status}, not completed",
                            hint="only a committed batch can be reverted")
    return None


def reverted_leftovers(batch: Batch, leftovers: Sequence[str]) -> list[str]:
    """The `path:line[ — text]` targets a revert brought back: the leftovers in the batch's
    own files (the text may hold colons, so the path is matched as a prefix)."""
    return [item for item in leftovers
            if any(item.startswith(f"{path}:") for path in batch.files)]


def undone_files(batch: Batch) -> list[str]:
    """The files a reverted batch's revert put back as they were: those its commit changed (a
    record without `changed_files`: its files); none for a batch that is not reverted. Whatever
    the recipe, they are left for a human to confirm (jobs/notes/tally.py)."""
    if batch.status is not BatchStatus.REVERTED:
        return []
    return list(batch.changed_files or batch.files)


def revert_summary(batch: Batch, commit: str) -> str:
    """What a revert did, as the command's answer: the files it undid and the targets it brought
    back, both left for a human."""
    verdict = "passes" if batch.revert_ok is not False else "does NOT pass"
    files = undone_files(batch)
    shown = md.codes(files[:5]) + (" …" if len(files) > 5 else "")
    undone = f"; its change to {len(files)} file{'' if len(files) == 1 else 's'} is undone " \
        f"({shown})" if files else ""
    back = f"; {len(batch.leftovers)} target{'' if len(batch.leftovers) == 1 else 's'} " \
        "came back" if batch.leftovers else ""
    listed = ", listed as leftovers for a human to confirm" if files or batch.leftovers else ""
    return (f"batch {batch.number} reverted in {commit[:7]}; the reverted head {verdict} "
            f"validation{undone}{back}{listed}")
