"""Waiting for GitHub's rate limits without holding a worker (issue 24).

A step that meets a rate limit is not retried in place and never ends at a failure gate: the job
records until when it waits (`ServerState.rate_limited_until`, shown on the card, in `status` and
in the task center as "waiting for GitHub's rate limit until HH:MM") and its next step is queued
for that time with RQ's scheduler. A primary limit waits until `x-ratelimit-reset`; a secondary
limit waits for its `Retry-After`, or, where GitHub does not say, at least a minute, doubling with
each limit met in a row (GitHub's guidance), up to MAX_WAIT_S.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Protocol

from redis import Redis

from bot.github.errors import RATE_LIMITED, SECONDARY_MIN_WAIT_S
from bot.observability.github_metrics import record_rate_limit_wait
from jobs.basics.errors import StepwiseError
from jobs.kernel.job import Job
from jobs.ports import JobStore


class ServerContext(Protocol):
    """What the wait needs of bot/server/context.py's `ServerContext` (which the steps importing
    this module import too: a protocol keeps the three free of a cycle)."""

    @property
    def clock(self) -> Callable[[], datetime]: ...

    @property
    def store(self) -> JobStore: ...

    @property
    def redis(self) -> Redis: ...

log = logging.getLogger(__name__)
# Waits Stepwise keeps by itself, before asking GitHub: the limit GitHub answered is not over
# yet (bot/github/limited.py), or the write budget is spent (bot/github/write_budget.py). They
# are not limits met again, so a secondary limit's wait does not grow with them.
OWN_WAITS = frozenset({"limited", "write_budget"})
MAX_WAIT_S = 3900.0  # a primary limit resets within the hour; a little margin
RESET_MARGIN_S = 1.0  # GitHub's reset second itself may still be limited


def is_rate_limit(exc: StepwiseError) -> bool:
    return exc.code == RATE_LIMITED


def rate_limit_wait_s(exc: StepwiseError, waits_in_a_row: int) -> float:
    """How long to wait: what GitHub asked (a primary reset, a Retry-After), else a minute
    doubling with each secondary limit met in a row."""
    if exc.evidence.get("asked"):
        asked = float(exc.evidence.get("retry_after", 0))
        margin = RESET_MARGIN_S if exc.evidence.get("rate_limit") == "primary" else 0.0
        return min(MAX_WAIT_S, max(asked + margin, 1.0))
    return float(min(MAX_WAIT_S, SECONDARY_MIN_WAIT_S * 2 ** min(waits_in_a_row, 6)))


def wait_for_rate_limit(ctx: ServerContext, job: Job, exc: StepwiseError,
                        schedule: Callable[[float], None]) -> Job:
    """Record the wait on the job, then `schedule(delay_s)` its next step for when the limit
    is over (bot/server/steps.py queues it with RQ's scheduler)."""
    wait = rate_limit_wait_s(exc, job.server.rate_limit_waits)
    until = ctx.clock() + timedelta(seconds=wait)
    if exc.evidence.get("rate_limit") not in OWN_WAITS:  # a limit GitHub answered, met anew
        job.server.rate_limit_waits += 1
    job.server.rate_limited_until, job.server.retry_scheduled = until, True
    ctx.store.save(job)
    record_rate_limit_wait(ctx.redis, str(exc.evidence.get("rate_limit", "")))
    log.warning("waiting for GitHub's rate limit", extra={
        "job_id": job.id, "rate_limit": exc.evidence.get("rate_limit"), "delay_s": wait,
        "until": until.isoformat()})
    schedule(wait)
    return job


def rate_limit_over(job: Job) -> None:
    """A step went through: the job no longer waits for a limit."""
    job.server.rate_limit_waits, job.server.rate_limited_until = 0, None
