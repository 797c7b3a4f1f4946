"""The job an event is about: found by its issue or by the pull request it opened, or rebuilt
from GitHub when its record was lost (bot/server/rebuild.py)."""

from __future__ import annotations

from bot.events import Event
from bot.plumbing.keys import pull_key, rebuild_lock
from bot.plumbing.leases import job_lock
from bot.server.context import ServerContext
from bot.server.rebuild import rebuild
from bot.server.steps import queue_next_step
from jobs.kernel.job import Job


def job_for(ctx: ServerContext, event: Event) -> Job | None:
    """The job of an issue, or of the pull request it opened; rebuilt from GitHub if its
    record was lost."""
    job = ctx.store.find(event.repo, event.number)
    if job is None:
        job_id = ctx.redis.get(pull_key(event.repo, event.number))
        if isinstance(job_id, bytes):
            job = ctx.store.load_id(job_id.decode())
    if job is None:
        with job_lock(ctx.redis, rebuild_lock(event.repo, event.number)) as acquired:
            if acquired:
                job = rebuild(ctx, repo=event.repo, number=event.number,
                              installation_id=event.installation_id)
        if job is not None:
            queue_next_step(ctx, job)  # it re-plans, adopts its commits and stops at its gate
    return job
