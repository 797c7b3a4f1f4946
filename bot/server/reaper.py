"""The reaper: every worker, in a thread of its own, finds the active jobs nobody works on
(unleased, nothing queued for them), marks them `interrupted` and queues them again, or after
MAX_INTERRUPTIONS in a row stops at the `interrupted` gate; webhook tasks whose worker died and
overdue delayed tasks are queued again. The reconciler's passes run in the same thread.

It reads only the index of active jobs every save keeps (bot/plumbing/idle_index.py), so an
idle round costs the same with 8,000 ended jobs as with none."""

from __future__ import annotations

import logging
import threading
import time
from datetime import timedelta

from bot.log_context import traced
from bot.plumbing import idle_index
from bot.plumbing.keys import event_lease, lease_key
from bot.plumbing.queue import pending_task_ids, requeue, requeue_overdue, started_task_ids, task_abandoned
from bot.server.context import ServerContext
from bot.server.steps import queue_next_step, tell
from jobs.adapters.store import ConflictError
from jobs.kernel.gates import open_gate
from jobs.kernel.job import Job
from jobs.kernel.model import JOB_TRANSITIONS, Gate, JobStatus

log = logging.getLogger(__name__)
MAX_INTERRUPTIONS = 3


def reap(ctx: ServerContext) -> list[str]:
    """Re-enqueue active jobs nobody works on; returns the ids it interrupted. The steps it
    queues log `trigger: reaper`."""
    with traced(None, "reaper"):
        return _reap(ctx)


def _reap(ctx: ServerContext) -> list[str]:
    waiting = pending_task_ids(ctx.redis)
    stale_before = ctx.clock() - timedelta(seconds=ctx.settings.lease_ttl_s)
    interrupted = []
    for job_id in idle_index.members(ctx.redis, idle_index.ACTIVE):  # never the ended ones
        job = ctx.store.load_id(job_id)
        if job is None or not job.is_active or job.updated_at > stale_before:
            continue
        if job.server.parked:  # nobody works on it on purpose: its installation is suspended
            continue
        if ctx.redis.exists(lease_key(job.id)) or any(job.id in task for task in waiting):
            continue
        try:
            interrupt(ctx, job)
            interrupted.append(job.id)
        except ConflictError:
            continue  # it moved meanwhile: somebody is working on it
    requeue_abandoned_events(ctx)
    for task_id in requeue_overdue(ctx.redis):
        log.warning("a delayed task was overdue; queued", extra={"task": task_id})
    return interrupted


def run_reaper(ctx: ServerContext, stop: threading.Event) -> None:
    """Every worker reaps in a thread of its own, so recovery never waits for RQ's scheduler
    (whose lock a dead worker may hold for a while); the reconciler's passes are queued here
    too: a worker that queued one tries again one interval later, one that found the round
    taken tries the moment it ends (`next_round_in`)."""
    from bot.server.reconciler import next_round_in, reconcile_round

    reap_every, reconcile_every = ctx.settings.reap_interval_s, ctx.settings.reconcile_interval_s
    next_reconcile = time.monotonic()  # the worker reaped once as it started
    next_reap = next_reconcile + reap_every
    while not stop.wait(max(0.0, min(next_reap, next_reconcile) - time.monotonic())):
        now = time.monotonic()
        if next_reap <= now:
            try:
                reap(ctx)
            except Exception:  # a round must never take the worker down
                log.exception("reaper round failed")
            next_reap = now + reap_every
        if next_reconcile <= now:
            wait = float(reconcile_every)
            try:
                if not reconcile_round(ctx):
                    wait = next_round_in(ctx.redis, reconcile_every)
            except Exception:  # a round must never take the worker down
                log.exception("reconciler round failed")
            next_reconcile = time.monotonic() + wait


def requeue_abandoned_events(ctx: ServerContext) -> None:
    """Webhook tasks whose worker died mid-way (started, nobody holds their lease) run again."""
    for task_id in started_task_ids(ctx.redis):
        delivery = task_id.removeprefix("event-")
        if delivery != task_id and task_abandoned(ctx.redis, task_id,
                                                  lease=event_lease(delivery)):
            log.warning("webhook task abandoned; queued again", extra={"delivery_id": delivery})
            requeue(ctx.redis, task_id)


def interrupt(ctx: ServerContext, job: Job) -> None:
    count = job.server.interruptions + 1
    job.server.interruptions = count
    log.warning("job interrupted", extra={"job_id": job.id, "interruptions": count})
    if job.status is not JobStatus.INTERRUPTED and JobStatus.INTERRUPTED not in JOB_TRANSITIONS[job.status]:
        # A pending cancel stays as it is: its next step cancels (resuming would forget it).
        ctx.store.save(job)
        queue_next_step(ctx, job)
        return
    if job.status is not JobStatus.INTERRUPTED:
        job.set_status(JobStatus.INTERRUPTED)
    if count > MAX_INTERRUPTIONS:
        open_gate(job, Gate.INTERRUPTED, now=ctx.clock(),
                  reason=f"the job was interrupted {count} times in a row; check the workers' "
                  "health")
        tell(ctx, job)
        return
    ctx.store.save(job)
    queue_next_step(ctx, job)
