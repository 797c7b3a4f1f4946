"""Resuming an ended job on GitHub (`/stepwise resume`, or the trigger label added again): the
same record, branch and pull request (reopened when it was closed), every completed batch kept;
and the offer to resume, posted when the issue or pull request of such a job is reopened."""

from __future__ import annotations

from bot.events import Event
from bot.server.context import ServerContext
from bot.server.steps import queue_next_step
from jobs.decisions.resume import resumable, resume_job
from jobs.inputs.config import CONFIG_PATH, load_config
from jobs.kernel.job import Job
from jobs.kernel.model import BatchStatus

OFFER = ("This {what} was reopened; its Stepwise job is `{status}`{why}. To carry it on, on the "
         "same branch `{branch}` and pull request, keeping every completed batch, comment "
         "`/stepwise resume` (or add the `{label}` label again).")


def resume_ended(ctx: ServerContext, job: Job, *, installation_id: int) -> str:
    """Resume `job` with the issue's text and, when no plan was approved yet, the default
    branch's config as they are now; save it and queue its next step. Raises RefusedError
    (nothing changed) for a completed job or one that has not ended."""
    client = ctx.installation(installation_id)
    owner, name = job.repo.split("/", 1)
    issue = client.issue(owner, name, job.number)
    config = None
    if job.approved_digest is None and resumable(job):
        info = client.repo(owner, name)
        config = load_config(client.file(owner, name, CONFIG_PATH, info.default_branch))
    message = resume_job(job, now=ctx.clock(), config=config, title=issue.title,
                         body=issue.body)
    job.server.installation_id = installation_id
    pull = job.server.pull
    if pull is not None:
        forge = ctx.forge(client, job.repo)
        forge.best_effort(job, "reopen the pull request",
                          lambda: client.reopen_pull(owner, name, pull.number))
    ctx.store.save(job)
    queue_next_step(ctx, job)
    return message


def offer_resume(ctx: ServerContext, event: Event, job: Job) -> None:
    """The issue or pull request of an ended job was reopened: say how to carry the job on
    (a reopening alone changes nothing: it may be meant for a discussion)."""
    if not resumable(job):
        return
    what = "pull request" if event.is_pull_request else "issue"
    why = f" ({job.server.cancelled_by})" if job.server.cancelled_by else (
        f" ({job.error.message})" if job.error is not None else "")
    text = OFFER.format(what=what, status=job.status, why=why, branch=job.branch,
                        label=job.config.trigger_label)
    done = sum(1 for batch in job.batches if batch.status is BatchStatus.COMPLETED)
    ctx.forge(ctx.installation(event.installation_id), event.repo).reply(
        job, event.number, f"reopened:{event.delivery_id}",
        f"{text}\n\nCompleted batches kept so far: {done}.")
    ctx.store.save(job)  # the comment id the forge remembered

