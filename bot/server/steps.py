"""Worker tasks that drive a job: one step under a lease, transient faults with backoff.

A step runs while its worker holds the job's lease (renewed by a heartbeat); a worker that dies
stops renewing, and the reaper (bot/server/reaper.py) queues the job again. Transient faults
(GitHub 5xx, refused pushes) retry after 5, 15 and 45 s (or GitHub's Retry-After), then stop at
the `failure` gate; GitHub's rate limits are waited for (bot/server/rate_limits.py), never a gate.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from bot.observability import metrics
from bot.plumbing.keys import pull_key
from bot.plumbing.leases import InstallationSlots, Lease, RepoSlots, lease_holder
from bot.plumbing.queue import STEP_TASK, current_task_id, enqueue, enqueue_step
from bot.plumbing.suspension_marks import is_suspended
from bot.server.context import ServerContext
from bot.server.rate_limits import is_rate_limit, rate_limit_over, wait_for_rate_limit
from bot.server.suspensions import is_suspension, park, suspend_met
from jobs.adapters.store import ConflictError
from jobs.basics.errors import RetryClass, StepwiseError
from jobs.engine.engine import Engine
from jobs.engine.revert import revert_batch
from jobs.kernel.gates import RefusedError, open_gate
from jobs.kernel.job import Job
from jobs.kernel.model import ACTIVE_JOB_STATUSES, BatchStatus, Gate, JobStatus
from jobs.notes.progress import render_card
from jobs.ports import Publication

log = logging.getLogger(__name__)
ACTIVE = ACTIVE_JOB_STATUSES
MAX_RETRY_AFTER_S = 900
RECONCILER = "reconciler"  # the lease holder name of the reconciler's passes


def queue_next_step(ctx: ServerContext, job: Job, *, delay_s: float = 0) -> None:
    """Queue the job's next step, under its version's task id (queued once however often)."""
    enqueue_step(ctx.redis, job.id, str(job.version), delay_s=delay_s)


def step_task(ctx: ServerContext, payload: dict[str, Any]) -> None:
    """The step task (wire name STEP_TASK, `advance`): one step of one job under its lease; the
    next step is queued when this one ends."""
    job_id = str(payload["job_id"])
    with Lease(ctx.redis, job_id, ttl_s=ctx.settings.lease_ttl_s) as lease:
        if not lease.held:
            if lease_holder(ctx.redis, job_id) == RECONCILER:  # it publishes, then lets go
                enqueue_step(ctx.redis, job_id, "after-reconciler", delay_s=1)
            return  # another worker is advancing it and will queue what follows
        job = ctx.store.load_id(job_id)
        if job is None or job.is_terminal or job.status is JobStatus.AWAITING_HUMAN:
            return
        if is_suspended(ctx.redis, job.server.installation_id):
            park(ctx, job)  # no GitHub call until `installation.unsuspend` resumes it
            return
        slots = repo_slots(ctx, job)
        position = slots.acquire(job.id, still_running=lambda other: running(ctx, other))
        if position:
            wait_for_slot(ctx, job, position)
            return
        shared = installation_slots(ctx, job)
        position = shared.acquire(job.id, still_running=lambda other: running(ctx, other)) \
            if shared is not None else 0
        if position:
            wait_for_slot(ctx, job, position)
            return
        try:
            job = step(ctx, job)
        except ConflictError:
            job = ctx.store.load_id(job_id) or job  # someone changed it meanwhile: go again
        except StepwiseError as exc:
            job = setback(ctx, job_id, exc)
        metrics.observe(ctx.redis, job)  # what the saved record shows this step (or others) did
    if not job.is_active:  # at a gate, waiting for CI or finished: the repository's next job runs
        waiting = slots.release(job.id)
        if waiting is not None:
            enqueue_step(ctx.redis, waiting, "slot", job.id, str(job.version))
        shared = installation_slots(ctx, job)
        waiting = shared.release(job.id) if shared is not None else None
        if waiting is not None:  # the installation's next job, whichever its repository
            enqueue_step(ctx.redis, waiting, "shared-slot", job.id, str(job.version))
    elif not job.server.retry_scheduled and not job.server.parked:
        queue_next_step(ctx, job)


SLOT_POLL_S = 10


def repo_slots(ctx: ServerContext, job: Job) -> RepoSlots:
    limit = ctx.settings.running_limit(job.server.installation_id or 0)
    return RepoSlots(ctx.redis, job.repo, limit)


def installation_slots(ctx: ServerContext, job: Job) -> InstallationSlots | None:
    limit = ctx.settings.installation_running_limit()
    installation = job.server.installation_id or 0
    return InstallationSlots(ctx.redis, installation, limit) if limit else None


def running(ctx: ServerContext, job_id: str) -> bool:
    job = ctx.store.load_id(job_id)
    return job is not None and job.is_active


def wait_for_slot(ctx: ServerContext, job: Job, position: int) -> None:
    """Another job of this repository is running: wait in line, showing the position."""
    if job.server.queue_position != position:
        job.server.queue_position = position
        ctx.store.save(job)
        try:
            forge = ctx.forge(ctx.installation(job.server.installation()), job.repo)
            if job.server.pull is not None:
                forge.refresh_pull(job)
            else:
                forge.upsert(job, job.number, "queue", render_card(job))
            ctx.store.save(job)
        except StepwiseError:
            log.warning("could not show the queue position", extra={"job_id": job.id})
    schedule_slot_poll(ctx, job)


def schedule_slot_poll(ctx: ServerContext, job: Job) -> None:
    """Look for a free slot again in SLOT_POLL_S, under a task id that alternates between two
    names so that it is never the id of the task running now: a task is not queued while one
    of its id runs, and the poll used the step's own id (the job's version) whenever the
    position, so the version, had not changed; the waiting job was then left with no task and
    the reaper took it for abandoned (issue 19's full-size fair share run)."""
    running_now = current_task_id() or ""
    name = "slot-poll-b" if running_now.endswith("slot-poll-a") else "slot-poll-a"
    enqueue_step(ctx.redis, job.id, name, delay_s=SLOT_POLL_S)


def step(ctx: ServerContext, job: Job) -> Job:
    started = job.version
    services, forge = ctx.services_for(job)
    if job.outbox:  # what earlier steps could not publish (the card, the plan)
        forge.deliver_all(job)
    engine = Engine(services, job)
    engine.run(max_steps=1)
    job = engine.job
    job.server.transient_failures, job.server.retry_scheduled = 0, False
    rate_limit_over(job)
    job.server.queue_position = None
    if job.status is not JobStatus.INTERRUPTED:
        job.server.interruptions = 0
    # What the forge remembered (comment ids, the pull request): saved unless the step saved
    # already and nothing changed since. A step always leaves a new version, whose number names
    # the next step's task (a task is not queued under the id of the one running now).
    if job.version == started or not ctx.store.unchanged(job):
        ctx.store.save(job)
    if job.server.pull is not None:
        ctx.redis.set(pull_key(job.repo, job.server.pull.number), job.id)
    return job


def setback(ctx: ServerContext, job_id: str, exc: StepwiseError) -> Job:
    """A step failed: back off and retry a transient fault, else stop where a human sees it."""
    metrics.record_github_error(ctx.redis, exc)
    job = ctx.store.load_id(job_id)
    if job is None:
        raise exc
    if is_suspension(exc):  # never a failure: parked until the installation is unsuspended
        return suspend_met(ctx, job)
    if is_rate_limit(exc):  # never a failure gate: the job waits for the limit, holding no worker
        return wait_for_rate_limit(ctx, job, exc, lambda delay_s: queue_next_step(
            ctx, job, delay_s=delay_s))
    tries = job.server.transient_failures + 1
    backoff = ctx.settings.backoff_s
    if exc.retry_class is RetryClass.AUTO_RETRY and tries <= len(backoff):
        wait = max(backoff[tries - 1], min(float(exc.evidence.get("retry_after", 0)),
                                           MAX_RETRY_AFTER_S))
        job.server.transient_failures, job.server.retry_scheduled = tries, True
        ctx.store.save(job)
        log.warning("transient fault; retrying", extra={"job_id": job.id, "code": exc.code,
                                                        "delay_s": wait})
        queue_next_step(ctx, job, delay_s=wait)
        return job
    job.server.retry_scheduled = False
    report = exc.info()
    if exc.retry_class is RetryClass.DO_NOT_RETRY:
        job.error = report
        job.set_status(JobStatus.FAILED)
    else:
        current = next((b for b in job.batches if b.status is BatchStatus.IN_PROGRESS), None)
        reason = (f"{exc.code} persisted after {len(backoff)} retries"
                  if exc.retry_class is RetryClass.AUTO_RETRY else exc.code)
        if current is not None:
            current.set_status(BatchStatus.FAILED)
        if job.status is JobStatus.QUEUED:  # it failed before planning began
            job.set_status(JobStatus.PLANNING)
        open_gate(job, Gate.FAILURE, reason=reason, now=ctx.clock(), report=report,
                  batch=current.number if current else None)
    tell(ctx, job)
    return job


def tell(ctx: ServerContext, job: Job) -> None:
    """Owe the gate's comment (or, for a job that ended, the summary) in the record, save it,
    then publish: what GitHub does not confirm stays owed for the reconciler."""
    forge = ctx.forge(ctx.installation(job.server.installation()), job.repo)
    forge.expect(job, Publication.GATE if job.gate is not None else Publication.SUMMARY)
    ctx.store.save(job)
    try:
        forge.deliver_all(job)
        ctx.store.save(job)
    except StepwiseError:  # the installation is gone, or the record moved on: still owed
        log.exception("could not publish on GitHub", extra={"job_id": job.id})


# -- tasks that need the worktree -------------------------------------------------------------------
@contextmanager
def leased_job(ctx: ServerContext, task: str, payload: dict[str, Any]) -> Iterator[Job | None]:
    """The job of `payload` under its lease; None (the task queued again shortly) while another
    worker holds it, or None when the job is gone."""
    with Lease(ctx.redis, str(payload["job_id"]), ttl_s=ctx.settings.lease_ttl_s) as lease:
        if not lease.held:
            enqueue(ctx.redis, task, payload, delay_s=5)
            yield None
        else:
            yield ctx.store.load_id(str(payload["job_id"]))


def cancelled(ctx: ServerContext, payload: dict[str, Any]) -> None:
    """A job cancelled while it waited: record what was done in the note, tell the issue."""
    with leased_job(ctx, "cancelled", payload) as job:
        if job is None:
            return
        services, _ = ctx.services_for(job)
        engine = Engine(services, job)
        engine.cancel_now()
        ctx.store.save(engine.job)


def revert(ctx: ServerContext, payload: dict[str, Any]) -> None:
    with leased_job(ctx, "revert", payload) as job:
        if job is None:
            return
        services, forge = ctx.services_for(job)
        engine = Engine(services, job)
        try:
            message = revert_batch(engine, int(payload["batch"]))
        except RefusedError as exc:
            message = f"Not reverted: {exc.message} ({exc.hint})"
        finally:
            engine.close()
        ctx.store.save(engine.job)
        metrics.observe(ctx.redis, engine.job)
        forge.reply(engine.job, forge.thread(engine.job), f"revert:{payload['comment_id']}",
                    message)


__all__ = ["STEP_TASK", "Publication", "cancelled", "queue_next_step", "revert", "step_task"]
