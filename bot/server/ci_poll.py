"""The reconciler's watch over jobs waiting for the repository's CI: a webhook that never came
(GitHub does not redeliver a lost one) must not leave a job waiting forever, and a check that
never finishes must still reach its timeout. Each pass queues the next step of every waiting job
whose checks were last read more than STEPWISE_CI_POLL_S ago; that step reads the checks (the
pass itself makes no GitHub call) and records when it did (`ci_wait.checked_at`).
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import Any

from bot.plumbing.queue import enqueue_step
from bot.server.context import ServerContext
from jobs.kernel.model import JobStatus

log = logging.getLogger(__name__)
MAX_POLLS_PER_PASS = 100  # steps queued per pass (the rest wait for the next pass)


def _when(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def due(doc: dict[str, Any], now: datetime, every: timedelta) -> bool:
    """Whether a job document waits for CI and its checks were last read `every` ago or more."""
    wait = doc.get("ci_wait")
    if doc.get("status") != JobStatus.RUNNING or not isinstance(wait, dict):
        return False
    last = _when(wait.get("checked_at")) or _when(wait.get("since"))
    return last is None or now - last >= every


def poll_ci_waits(ctx: ServerContext, docs: dict[str, dict[str, Any]]) -> list[str]:
    """Queue the next step of the waiting jobs in `docs` (the pass's documents) that are due;
    returns their ids. One queue look-up and one enqueue per due job, none for the others."""
    now = ctx.clock()
    every = timedelta(seconds=ctx.settings.ci_poll_s)
    queued: list[str] = []
    for job_id, doc in docs.items():
        if len(queued) >= MAX_POLLS_PER_PASS:
            break
        if due(doc, now, every):
            enqueue_step(ctx.redis, job_id, str(doc.get("version", 0)))
            queued.append(job_id)
    if queued:
        log.info("reading the CI of waiting jobs", extra={"jobs": queued})
    return queued
