"""Reverting one committed batch with a new commit (never by rewriting history).

Whether a revert may happen and what it did are pure (jobs/decisions/verdicts.py); this module
writes the commit and validates the reverted head.
"""

from __future__ import annotations

from jobs.basics.errors import StateError, WorkspaceError
from jobs.decisions.verdicts import (
    batch_refusal,
    revert_refusal,
    revert_summary,
    reverted_leftovers,
)
from jobs.engine import branch_sync, review
from jobs.engine.attempt import run_commands
from jobs.engine.context import JobContext
from jobs.engine.note_commit import commit_note
from jobs.kernel import trailers
from jobs.kernel.gates import RefusedError
from jobs.kernel.job import Batch
from jobs.kernel.model import BatchStatus, JobStatus
from jobs.notes.progress import files_label, render_card
from jobs.ports import Publication


def revert_batch(engine: JobContext, number: int) -> str:
    """Add a revert commit for batch `number`, mark it `reverted` and rewrite the note."""
    job = engine.job
    refusal = revert_refusal(job, ())
    if refusal is None:
        refusal = revert_refusal(job, branch_sync.foreign_commits(engine))
    if refusal is not None:
        raise refusal
    branch_sync.adopt_only(engine)
    try:
        batch = job.batch(number)
    except StateError as exc:  # a wrong batch number is a refused command (exit 2), not a failure
        raise RefusedError(exc.message, hint=exc.hint, code=exc.code) from None
    refusal = batch_refusal(batch)
    if refusal is not None or batch.commit is None:
        raise refusal or RefusedError(f"batch {number} has no commit")
    worktree = engine.worktree
    worktree.reset(job.head_sha)
    try:
        worktree.revert(batch.commit)
    except WorkspaceError as exc:
        worktree.reset(job.head_sha)
        raise RefusedError(
            f"batch {number} cannot be reverted cleanly: later commits changed the same lines",
            hint="revert the later batches first, or resolve the conflict by hand",
            code="revert_conflict",
        ) from exc
    tree = worktree.write_tree()
    message = (
        f"stepwise(#{job.number}): revert batch {number} — {files_label(batch.files)}\n\n"
        f"This reverts commit {batch.commit}.\n\n"
        + trailers.trailer_lines((trailers.JOB, job.id), (trailers.REVERT, number))
    )
    commit = worktree.commit_tree(tree, job.head_sha, message)
    commit = engine.land(commit)
    job.head_sha = commit
    batch.set_status(BatchStatus.REVERTED)
    batch.reason, batch.revert_commit = "reverted with {{revert}}", commit
    validate_reverted_head(engine, batch)
    engine.event("revert", f"batch {number} reverted in {commit[:7]}", number)
    engine.save()
    # With `at_end` the running job's last note tells the revert; a job that has ended already
    # committed that note, so the revert rewrites it (else it would say what is no longer true).
    if job.config.notes == "per_milestone" or job.is_terminal:
        commit_note(engine, f"revert of batch {number}")
    engine.run_hooks("after_revert")  # CI: at ci_failed, wait for CI on the new head again
    # The card (the PR body) counts the revert and what it left for a human, even after the end.
    engine.publish(Publication.PROGRESS, render_card(job, fold_finished=not job.is_terminal))
    return revert_summary(batch, commit)


def validate_reverted_head(engine: JobContext, batch: Batch) -> None:
    """Validate the branch after a revert and record it: the targets the revert brought back
    become the batch's leftovers, and a completed job gets a new final review."""
    job = engine.job
    batch.leftovers = reverted_leftovers(batch, review.leftovers_at(engine, job.head_sha))
    if job.status is JobStatus.COMPLETED:
        job.final_review = review.run_review(engine)
        batch.revert_commands = list(job.final_review.commands)
        batch.revert_ok = job.final_review.ok
        return
    runner = engine.runner
    engine.worktree.reset(job.head_sha)
    failure = runner.ensure_setup(job)
    evidence = [] if failure is None else [failure]
    if failure is None:
        evidence, failure = run_commands(runner.sandbox, job.config.validate_argvs(),
                                         cwd=engine.worktree.path, policy=runner.policy)
    batch.revert_commands, batch.revert_ok = evidence, failure is None
