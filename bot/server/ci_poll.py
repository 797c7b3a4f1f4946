"""The reconciler's watch over jobs waiting for the repository's CI: a webhook that never came
(GitHub does not redeliver a lost one) must not leave a job waiting forever, and a check that
never finishes must still reach its timeout. Each pass queues the next step of every waiting job
whose checks were last read more than STEPWISE_CI_POLL_S ago; that step reads the checks (the
pass itself makes no GitHub call) and records when it did (what the job's CI part awaits,
read from the document as the kernel's `Awaited`, jobs/kernel/record_parts.py).
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import Any

from bot.plumbing.queue import enqueue_step
from bot.server.context import ServerContext
from jobs.kernel.model import JobStatus
from jobs.kernel.record_parts import awaited_in

log = logging.getLogger(__name__)
MAX_POLLS_PER_PASS = 100  # steps queued per pass (the rest wait for the next pass)


def due(doc: dict[str, Any], now: datetime, every: timedelta) -> bool:
    """Whether a job document waits for CI and its checks were last read `every` ago or more."""
    if doc.get("status") != JobStatus.RUNNING:
        return False
    awaited = awaited_in(doc)
    return awaited is not None and now - awaited.looked_at >= every


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
