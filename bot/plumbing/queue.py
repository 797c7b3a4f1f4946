"""RQ's `stepwise` queue as both the web app and the workers use it: queueing a task by name,
finding one that will never finish by itself, queueing it again, and the ids of waiting or
started tasks.

A task is queued as a call of `perform(task, payload)` under a stable entry-point name (PERFORM):
RQ stores the name with every queued job and a worker resolves it at run time through its table
of entry points (bot/server/worker.py `StableJob`), never by importing it as a code location.
So the code may move while tasks wait in Redis, and the web app queues tasks without importing
the workers' code. The rules that keep rolling upgrades working (docs/operating.md, "Upgrading"):

- An entry-point name is never retired while a supported release may have queued it: every name
  a release ever queued stays in ENTRY_POINTS (FORMER_ENTRY_POINTS) for at least one release.
- The name queued (PERFORM) is one the previous release's workers can run too. It is the dotted
  path the 0.1 workers import; it changes only to a name every running worker already resolves.
- A task name (`advance`, `event`, ...) is never renamed, only added; the old one keeps working.
"""

from __future__ import annotations

import time
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import redis
from rq import Queue, Retry, get_current_job
from rq.exceptions import NoSuchJobError
from rq.job import Job as RQJob
from rq.registry import FailedJobRegistry, ScheduledJobRegistry, StartedJobRegistry

from bot.log_context import trace_payload
from bot.plumbing.keys import lease_key, rq_id, step_task_id

QUEUE_NAME = "stepwise"
STEP_TASK = "advance"  # the step task's wire name: tasks queued by older versions carry it
PERFORM = "bot.server.worker.perform"  # the entry point queued (0.1 workers import this path)
# Names older releases queued, resolved to the same entry point (kept at least one release).
FORMER_ENTRY_POINTS = ("jobs.worker.perform",)
ENTRY_POINTS = (PERFORM, *FORMER_ENTRY_POINTS)
BACKOFF_S = (5, 15, 45)
STEP_TIMEOUT_S = 3600  # an RQ job is one step; commands inside have their own timeouts


def queue(connection: redis.Redis) -> Queue:
    return Queue(QUEUE_NAME, connection=connection)


def enqueue(connection: redis.Redis, task: str, payload: dict[str, Any], *,
            job_id: str | None = None, delay_s: float = 0, retry: bool = True) -> RQJob | None:
    """Queue `task`; with `job_id`, nothing is queued while a job of that id waits or runs. The
    payload carries the trace bound here (the chain's delivery id and trigger)."""
    q = queue(connection)
    payload = trace_payload(payload)
    if job_id is not None:
        existing = q.fetch_job(job_id)
        if existing is not None and existing.get_status(refresh=True) in (
                "queued", "started", "scheduled", "deferred"):
            return None
    options: dict[str, Any] = {
        "job_id": job_id or rq_id(task, uuid.uuid4().hex),
        "job_timeout": STEP_TIMEOUT_S,
        "result_ttl": 600,
        "failure_ttl": 7 * 24 * 3600,
        "retry": Retry(max=len(BACKOFF_S), interval=list(BACKOFF_S)) if retry else None,
    }
    if delay_s > 0:
        return q.enqueue_in(timedelta(seconds=delay_s), PERFORM, task, payload, **options)
    return q.enqueue(PERFORM, task, payload, **options)


def enqueue_step(connection: redis.Redis, job_id: str, *why: str,
                 delay_s: float = 0) -> RQJob | None:
    """Queue one step of job `job_id` under the task id `why` names (its version, or what woke
    it): nothing is queued while a task of that id waits or runs. A step is not retried by RQ;
    its own setbacks queue the next one."""
    return enqueue(connection, STEP_TASK, {"job_id": job_id}, delay_s=delay_s, retry=False,
                   job_id=step_task_id(job_id, *why))


def current_task_id() -> str | None:
    """The id of the RQ task running now (None outside RQ)."""
    task = get_current_job()
    return task.id if task is not None else None


def last_try() -> bool:
    """Whether the running RQ task is not retried if it fails now (True outside RQ)."""
    task = get_current_job()
    return task is None or not task.retries_left


TAKEOVER_GRACE_S = 3.0  # a task takes its lease within this long of RQ starting it


def task_abandoned(connection: redis.Redis, job_id: str, *, lease: str,
                   older_than_s: float = TAKEOVER_GRACE_S) -> bool:
    """Whether the RQ task `job_id` will never finish by itself: it failed or was stopped, or it
    shows as started while nobody holds its lease (its worker died)."""
    try:
        task = RQJob.fetch(job_id, connection=connection)
    except NoSuchJobError:
        return False  # finished long ago (results expire), or never queued
    status = task.get_status(refresh=False)
    if status in ("failed", "stopped", "canceled"):
        return True
    if status != "started" or connection.exists(lease_key(lease)):
        return False
    started = task.started_at.replace(tzinfo=UTC) if task.started_at else None
    return started is None or (datetime.now(UTC) - started).total_seconds() > older_than_s


def requeue(connection: redis.Redis, job_id: str) -> None:
    """Queue an abandoned task again, under the same id."""
    q = queue(connection)
    task = RQJob.fetch(job_id, connection=connection)
    StartedJobRegistry(queue=q).remove_executions(task)  # RQ 3 keeps one entry per execution
    FailedJobRegistry(queue=q).remove(task)
    q.enqueue_job(task)


OVERDUE_S = 3.0  # RQ's scheduler runs every second; later than this, its holder is gone


def requeue_overdue(connection: redis.Redis) -> list[str]:
    """Queue delayed tasks (backoffs, retries) that RQ's scheduler left waiting past their
    time: the worker holding the scheduler lock may have died, and its lock lingers."""
    q = queue(connection)
    registry = ScheduledJobRegistry(queue=q)  # type: ignore[no-untyped-call]
    due = registry.get_jobs_to_schedule(int(time.time() - OVERDUE_S))
    moved = []
    for job_id in due:
        job_id = job_id.decode() if isinstance(job_id, bytes) else str(job_id)
        if registry.remove(job_id):  # whoever removes it first queues it
            q.enqueue_job(RQJob.fetch(job_id, connection=connection))
            moved.append(job_id)
    return moved


def started_task_ids(connection: redis.Redis) -> list[str]:
    return list(StartedJobRegistry(queue=queue(connection)).get_job_ids())


def pending_task_ids(connection: redis.Redis) -> set[str]:
    """Ids of RQ jobs that wait to run (queued or scheduled), not those already started."""
    q = queue(connection)
    ids = set(q.get_job_ids())
    ids.update(ScheduledJobRegistry(queue=q).get_job_ids())  # type: ignore[no-untyped-call]
    return ids


def enqueue_new(pipe: redis.client.Pipeline, connection: redis.Redis, task: str,
                payload: dict[str, Any], *, job_id: str) -> None:
    """Add `task` to a pipeline the caller executes, for an id known to be new (no look-up)."""
    queue(connection).enqueue_call(
        PERFORM, args=(task, trace_payload(payload)), job_id=job_id, timeout=STEP_TIMEOUT_S, result_ttl=600,
        failure_ttl=7 * 24 * 3600, retry=Retry(max=len(BACKOFF_S), interval=list(BACKOFF_S)),
        pipeline=pipe)
