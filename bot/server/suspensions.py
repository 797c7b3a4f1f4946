"""A suspended installation (issue 24): an owner can suspend a GitHub App's installation, and
GitHub then refuses every token mint and call for it (403 "This installation has been
suspended") until it is unsuspended. No job of it fails for that.

`installation.suspend` (or a 403 saying so, when that webhook was missed) marks the
installation suspended in Redis (bot/plumbing/suspension_marks.py) and parks its open jobs: no
step, reconciler pass or publication makes a GitHub call for them, and the record says why
(`ServerState.parked`, shown in the task center and `status`). New deliveries for the
installation are acknowledged and ignored with a log line (bot/web/webhooks.py).
`installation.unsuspend` clears the mark and resumes every parked job where it stood.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

import redis as redis_lib

from bot.events import Event
from bot.github.errors import SUSPENDED
from bot.plumbing.suspension_marks import SUSPEND, is_suspended, mark, mark_met, suspended_by
from jobs.adapters.store import ConflictError
from jobs.basics.errors import StepwiseError
from jobs.kernel.job import Job
from jobs.kernel.records import Event as JobEvent

if TYPE_CHECKING:
    from bot.server.context import ServerContext

log = logging.getLogger(__name__)
PARKED = ("the App's installation{on} is suspended{since}: Stepwise makes no GitHub call for this "
          "job until an owner unsuspends it (GitHub: Settings → Applications → Configure), then "
          "it goes on by itself")
MAX_SCANNED_JOBS = 10_000


def is_suspension(exc: StepwiseError) -> bool:
    return exc.code == SUSPENDED


def why(connection: redis_lib.Redis, installation_id: int) -> str:
    account, since = suspended_by(connection, installation_id)
    when = f" since {since[11:16]} UTC" if len(since) >= 16 else ""
    return PARKED.format(on=f" on {account}" if account else "", since=when)


def park(ctx: ServerContext, job: Job) -> Job:
    """Leave the job where it stands, saying why; nothing is scheduled for it."""
    installation = job.server.installation_id or 0
    reason = why(ctx.redis, installation)
    if job.server.parked != reason:
        job.server.parked, job.server.retry_scheduled = reason, False
        job.events.append(JobEvent(at=ctx.clock(), kind="parked", message=reason))
        ctx.store.save(job)
        log.warning("job parked: the installation is suspended", extra={
            "job_id": job.id, "installation_id": installation})
    return job


def suspend_met(ctx: ServerContext, job: Job) -> Job:
    """A call answered "suspended" although no webhook said so: mark it, then park."""
    if not is_suspended(ctx.redis, job.server.installation_id):
        mark_met(ctx.redis, job.server.installation_id or 0, at=ctx.clock())
    return park(ctx, job)


def on_suspension(ctx: ServerContext, event: Event, *,
                  queue_next_step: Callable[[ServerContext, Job], None]) -> None:
    """`installation.suspend`: park every open job of the installation; `.unsuspend`: resume
    every job parked for it (its next step is queued with `queue_next_step`, bot/server/
    steps.py's, passed in since the steps import this module; one at a gate keeps waiting)."""
    mark(ctx.redis, event, at=ctx.clock())
    for job_id in ctx.store.job_ids(limit=MAX_SCANNED_JOBS):
        for _attempt in range(3):  # a worker saving the same job meanwhile: read it again
            job = ctx.store.load_id(job_id)
            if job is None or job.is_terminal or job.server.installation_id != event.installation_id:
                break
            try:
                if event.reason == SUSPEND:
                    park(ctx, job)
                elif job.server.parked:
                    job.server.parked = ""
                    job.events.append(JobEvent(at=ctx.clock(), kind="resumed", message=(
                        "the App's installation was unsuspended: the job goes on")))
                    ctx.store.save(job)
                    log.info("job resumed: the installation was unsuspended",
                             extra={"job_id": job.id})
                    queue_next_step(ctx, job)
            except ConflictError:
                continue
            break

