"""Resuming a job that ended without completing (cancelled, or failed): the same record, branch
and pull request, every completed batch kept (its commit is adopted by its trailers on the next
step), the work left picked up where it stopped. A completed job has nothing to resume."""

from __future__ import annotations

from datetime import datetime

from jobs.basics.voice import cmd
from jobs.inputs.config import RepoConfig
from jobs.inputs.spec import parse_issue
from jobs.kernel.gates import RefusedError, note_spec_change
from jobs.kernel.job import Job
from jobs.kernel.model import BatchStatus, JobStatus

RESUMABLE = (JobStatus.CANCELLED, JobStatus.FAILED)
COMPLETED_HINT = "the job's work is done; to run the task again, start a new job"
NOT_ENDED_HINT = "the job has not ended: answer its open gate, or see where it is with {status}"


def resumable(job: Job) -> bool:
    """Whether `job` ended in a way `resume` can carry on from."""
    return job.status in RESUMABLE


def resume_job(job: Job, *, now: datetime, config: RepoConfig | None = None,
               title: str | None = None, body: str | None = None) -> str:
    """Carry an ended job on: planning again when its plan was never approved (with `config`,
    the repository's config as it is now, when given), else running from the first batch not
    done. An issue text (`title`, `body`) whose spec differs from the job's is adopted as an edit
    would be (re-planned before approval, the `spec_changed` gate after). Raises RefusedError,
    changing nothing, for a completed job or one that has not ended."""
    if job.status is JobStatus.COMPLETED:
        raise RefusedError(f"job #{job.number} completed: there is nothing to resume",
                           hint=COMPLETED_HINT)
    if not resumable(job):
        raise RefusedError(f"job #{job.number} is `{job.status}`, not ended: there is nothing "
                           "to resume", hint=NOT_ENDED_HINT.format(status=cmd("status")))
    changed = changed_issue(job, title, body)  # a broken spec refuses before anything changes
    was = job.status
    job.error = None
    job.server.cancelled_by = ""
    for batch in job.batches:
        if batch.status is BatchStatus.FAILED:
            batch.consecutive_failures = 0  # a fresh start for the batch that stopped it
    if job.approved_digest is None:
        if config is not None:
            job.config = config
            job.baseline, job.baseline_ok, job.baseline_sha = [], None, None
        job.set_status(JobStatus.PLANNING)
    else:
        job.set_status(JobStatus.RUNNING)
    if changed is not None:
        note_spec_change(job, title=changed[0], body=changed[1], now=now)
    return f"job #{job.number} resumed ({was} before) on `{job.branch}`: {kept(job)}"


def changed_issue(job: Job, title: str | None, body: str | None) -> tuple[str, str] | None:
    """The issue text when its spec differs from the job's, else None (BadInputError when it
    holds no valid spec)."""
    if title is None or body is None:
        return None
    return (title, body) if parse_issue(title, body).spec.digest() != job.spec_digest else None


def kept(job: Job) -> str:
    """What a resumed job keeps and what it does next."""
    done = sum(1 for b in job.batches if b.status is BatchStatus.COMPLETED)
    keeps = ("its completed batch is kept" if done == 1 else
             f"its {done} completed batches are kept") if done else "no batch was committed yet"
    if job.status is JobStatus.PLANNING:
        return f"{keeps}; it plans again (the baseline runs again) and waits at the plan gate"
    if job.gate is not None:
        return f"{keeps}; it waits at the `{job.gate.kind}` gate"
    return f"{keeps}; it goes on with the work left"
