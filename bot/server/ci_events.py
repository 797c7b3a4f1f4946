"""Waking jobs that wait for the repository's CI: a CI webhook (a check run created or completed,
a check suite or workflow run completed, a commit status) names a sha; the jobs waiting on it
are found in the index `ci:<repo>@<sha>` (kept by bot/plumbing/redis_store.py's save) and their
next step is queued. That step reads the checks; the webhook is only a wake-up call, so a missed
one costs nothing but time (the reconciler polls, bot/server/ci_poll.py).

A webhook that comes while a step of the job runs (CI faster than the step that began the wait)
wakes it a few seconds later instead, so it is not dropped for the lease being taken; the
reconciler's poll is the backstop. What Stepwise's own check runs report wakes nothing:
publishing them is part of a step, and waking on them would loop.
"""

from __future__ import annotations

import logging

from bot.events import Event
from bot.plumbing.keys import ci_key
from bot.plumbing.leases import lease_holder
from bot.plumbing.queue import enqueue_step
from bot.server.context import ServerContext
from bot.server.steps import queue_next_step

log = logging.getLogger(__name__)
AFTER_STEP_S = 5  # how long after a webhook that came mid-step the woken step runs


def is_own(ctx: ServerContext, event: Event) -> bool:
    """Whether Stepwise itself reported this (its check runs and suites)."""
    settings = ctx.settings
    return event.check_app == settings.app_slug or bool(
        event.check_app_id and event.check_app_id == settings.app_id)


def waiting_job_ids(ctx: ServerContext, repo: str, sha: str) -> list[str]:
    members = ctx.redis.smembers(ci_key(repo, sha))
    return sorted(m.decode() if isinstance(m, bytes) else str(m) for m in members)


def on_ci_event(ctx: ServerContext, event: Event) -> list[str]:
    """Queue the next step of each job waiting on `event.sha`; returns their ids."""
    if is_own(ctx, event) or not event.sha:
        return []
    woken: list[str] = []
    for job_id in waiting_job_ids(ctx, event.repo, event.sha):
        job = ctx.store.load_id(job_id)
        awaited = job.awaited() if job is not None and job.waiting_outside else None
        if job is None or awaited is None or awaited.sha != event.sha:
            continue  # it moved on since the index was read
        if lease_holder(ctx.redis, job_id) is not None:
            # A step is running (the one that began this wait, still publishing): a wake now
            # would find the lease taken and be dropped, so it comes once the step is done.
            enqueue_step(ctx.redis, job_id, "ci-after-step", str(job.version), delay_s=AFTER_STEP_S)
        else:
            queue_next_step(ctx, job)
        woken.append(job_id)
    if woken:
        log.info("CI reported on a commit jobs wait on", extra={
            "repo": event.repo, "sha": event.sha, "check": event.check_name, "jobs": woken})
    return woken
