"""Uninstalls and removed repositories: the jobs there can never post or push again, so they
end `failed` (do_not_retry) with a record saying why; then the private code the worker kept of
those repositories is deleted (bot/server/uninstall_files.py)."""

from __future__ import annotations

import logging

from bot.events import Event
from bot.plumbing.keys import removed_key
from bot.plumbing.suspension_marks import SUSPEND, UNSUSPEND
from bot.server import uninstall_files
from bot.server.confirmations import confirmed_installation_event
from bot.server.context import ServerContext
from bot.server.steps import queue_next_step
from bot.server.suspensions import on_suspension
from jobs.adapters.store import ConflictError
from jobs.basics.errors import ErrorInfo, RetryClass
from jobs.kernel.job import Job
from jobs.kernel.model import JobStatus
from jobs.kernel.records import Event as JobEvent

log = logging.getLogger(__name__)
ENDING_ACTIONS = {
    "installation.deleted": "the App was uninstalled from {account}",
    "installation_repositories.removed": "the repository was removed from the App's installation",
}
HINT = "install the App on the repository again, then label the issue to start a new job"
REMOVED_MARK_S = 7 * 86400  # longer than any task queued before the uninstall waits to run
MAX_SCANNED_JOBS = 10_000


def concerned(job: Job, event: Event) -> bool:
    if job.is_terminal:
        return False
    if event.reason == "installation.deleted":
        return job.server.installation_id == event.installation_id or \
            job.repo in event.repos
    return job.repo in event.repos


def end_removed_jobs(ctx: ServerContext, event: Event) -> None:
    """End every open job the uninstall or removal cuts off; park (or resume) the open jobs
    of a suspended (or unsuspended) installation; other installation events only get
    recorded (by the web app). Each is confirmed with GitHub first (a replayed body changes
    nothing)."""
    if event.reason not in (SUSPEND, UNSUSPEND, *ENDING_ACTIONS):
        return
    confirmed = confirmed_installation_event(ctx, event)
    if confirmed is None:
        return
    event = confirmed
    if event.reason in (SUSPEND, UNSUSPEND):
        on_suspension(ctx, event, queue_next_step=queue_next_step)
        return
    template = ENDING_ACTIONS.get(event.reason)
    if template is None:
        return
    mark_removed(ctx, event)
    why = template.format(account=event.account or f"installation {event.installation_id}")
    by = f" by @{event.sender}" if event.sender else ""
    ended: set[str] = set()
    for job_id in ctx.store.job_ids(limit=MAX_SCANNED_JOBS):
        for _attempt in range(3):  # a worker saving the same job meanwhile: read it again
            job = ctx.store.load_id(job_id)
            if job is None or not concerned(job, event):
                break
            job.error = ErrorInfo(
                code="installation_removed", retry_class=RetryClass.DO_NOT_RETRY,
                message=f"Stepwise lost access to {job.repo}: {why}{by} "
                f"({event.reason}); nothing can be posted or pushed any more",
                hint=HINT, evidence={"installation_id": event.installation_id,
                                     "delivery_id": event.delivery_id})
            job.events.append(JobEvent(at=ctx.clock(), kind="installation_removed",
                                       message=job.error.message))
            job.set_status(JobStatus.FAILED)
            try:
                ctx.store.save(job)
            except ConflictError:
                continue
            log.info("job ended: installation removed", extra={"job_id": job.id,
                                                               "repo": job.repo})
            ended.add(job.repo)
            break
    forget_files(ctx, event, ended)


def mark_removed(ctx: ServerContext, event: Event) -> None:
    """Mark what the App lost, before its files are deleted: no task clones it again
    (bot/server/context.py) until GitHub says the repository was added back (the web app
    clears the mark, bot/web/webhooks.py)."""
    keys = [removed_key(event.installation_id)] if event.reason == "installation.deleted" else \
        [removed_key(event.installation_id, repo) for repo in event.repos]
    for key in keys:
        ctx.redis.set(key, event.delivery_id or "1", ex=REMOVED_MARK_S)


def forget_files(ctx: ServerContext, event: Event, ended: set[str]) -> None:
    """With every job there ended: delete the clones (worktrees, artifacts, transcripts
    inside) and cached environments of what the App lost access to, each once no task uses
    it (bot/server/uninstall_files.py)."""
    workdir = ctx.settings.workdir
    for repo in sorted({*ended, *event.repos}):
        uninstall_files.forget_repository(workdir, repo, why=event.reason)
    if event.reason == "installation.deleted" and event.account:
        uninstall_files.forget_account(workdir, event.account, why=event.reason)
