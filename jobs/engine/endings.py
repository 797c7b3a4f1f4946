"""How a job ends when it does not complete: failed, or cancelled (with its change note)."""

from __future__ import annotations

from jobs.basics.errors import ErrorInfo
from jobs.engine import branch_sync
from jobs.engine.context import JobContext, Outcome, outcome_of
from jobs.engine.note_commit import commit_note
from jobs.kernel.model import BatchStatus, JobStatus
from jobs.notes.progress import render_card
from jobs.ports import Publication


def fail(engine: JobContext, error: ErrorInfo) -> Outcome:
    """End the job as failed with `error` (one that retrying cannot fix), with its summary."""
    engine.job.error = error
    if engine.job.status is not JobStatus.FAILED:
        engine.job.set_status(JobStatus.FAILED)
    engine.event("failed", error.message)
    engine.save(touched=())
    engine.run_hooks("at_end")
    engine.publish(Publication.SUMMARY, render_card(engine.job))
    return outcome_of(engine.job, voice=engine.services.voice)


def finish_cancel(engine: JobContext) -> Outcome:
    """End the job as cancelled from the stored record: our commits adopted, an unfinished
    attempt closed, the change note committed when a batch was."""
    stored = engine.services.store.reload(engine.job)
    if stored is not None:
        engine.job = stored
    branch_sync.adopt_only(engine)
    if engine.job.status is not JobStatus.CANCELLED:
        if engine.job.status is not JobStatus.CANCEL_REQUESTED:
            engine.job.set_status(JobStatus.CANCEL_REQUESTED)
        engine.job.set_status(JobStatus.CANCELLED)
    for batch in engine.job.batches:
        if batch.status is BatchStatus.IN_PROGRESS:
            batch.set_status(BatchStatus.PENDING)
            attempt = batch.last_attempt
            if attempt is not None and attempt.finished_at is None:
                attempt.outcome, attempt.finished_at = "cancelled", engine.now()
    engine.event("cancelled", "job cancelled")
    engine.save()
    engine.run_hooks("at_end")
    if any(b.commit for b in engine.job.batches) and engine.services.repository.branch_head(
        engine.job.branch
    ):
        commit_note(engine, "cancelled")
    engine.publish(Publication.SUMMARY, render_card(engine.job))
    return outcome_of(engine.job, voice=engine.services.voice)
