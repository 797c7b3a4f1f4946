"""RQ plumbing: the `stepwise` queue, task dispatch, job locks and the worker loop.

The engine package never imports `bot/`: the entry point that starts a worker installs the
task handlers (`install_handlers`), and the web app enqueues tasks by name.
"""

from __future__ import annotations

import logging
import re
import signal
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import redis
from rq import Queue, Retry, Worker, get_current_job
from rq.exceptions import NoSuchJobError
from rq.job import Job as RQJob
from rq.registry import FailedJobRegistry, ScheduledJobRegistry, StartedJobRegistry
from rq.worker import BaseWorker

from bot.observability.jsonlog import split_trace, trace_payload, traced
from bot.server.keys import lease_key, lock_key, slots_key, waiting_key

QUEUE_NAME = "stepwise"
BACKOFF_S = (5, 15, 45)
STEP_TIMEOUT_S = 3600  # an RQ job is one step; commands inside have their own timeouts
LOCK_TTL_S = 900

Handler = Callable[[dict[str, Any]], None]
_handlers: dict[str, Handler] = {}
log = logging.getLogger(__name__)


def install_handlers(handlers: Mapping[str, Handler]) -> None:
    _handlers.update(handlers)


def perform(task: str, payload: dict[str, Any]) -> None:
    """The one function RQ runs: dispatch `task` to its installed handler, with the trace its
    payload carries (the webhook that started the chain) bound to every log line and to every
    task it queues (bot.observability.jsonlog)."""
    handler = _handlers.get(task)
    if handler is None:
        raise RuntimeError(f"no handler installed for task {task!r}; start workers with "
                           "`stepwise worker`")
    payload, trace = split_trace(payload)
    if trace is None:
        handler(payload)
        return
    with traced(trace["delivery_id"], trace["trigger"]):
        handler(payload)


def rq_id(*parts: str) -> str:
    """An RQ job id from free text (RQ allows letters, digits, `_` and `-`)."""
    return re.sub(r"[^A-Za-z0-9_-]+", "-", "-".join(parts)).strip("-")[:200]


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
        return q.enqueue_in(timedelta(seconds=delay_s), perform, task, payload, **options)
    return q.enqueue(perform, task, payload, **options)


def current_task_id() -> str | None:
    """The id of the RQ task running now (None outside RQ)."""
    task = get_current_job()
    return task.id if task is not None else None


def last_try() -> bool:
    """Whether the running RQ task is not retried if it fails now (True outside RQ)."""
    task = get_current_job()
    return task is None or not task.retries_left


LEASE_TTL_S = 30  # a worker that stops renewing (killed, frozen) loses its lease this fast
_RENEW = ("if redis.call('get', KEYS[1]) == ARGV[1] then "
          "return redis.call('expire', KEYS[1], ARGV[2]) else return 0 end")
_RELEASE = ("if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) "
            "else return 0 end")


def lease_holder(connection: redis.Redis, job_id: str) -> str | None:
    """What holds the job's lease (`step`, `reconciler`, ...), or None when it is free."""
    token = connection.get(lease_key(job_id))
    if token is None:
        return None
    text = token.decode() if isinstance(token, bytes) else str(token)
    return text.partition(":")[0]


def event_lease(delivery_id: str) -> str:
    """The lease name of the task handling one webhook delivery."""
    return f"event-{delivery_id}"


class Lease:
    """A worker's claim on one job, renewed by a heartbeat thread while the work runs.

    When the worker dies the heartbeat stops and the lease expires after LEASE_TTL_S; the
    reaper then finds the job unleased and re-enqueues it.
    """

    def __init__(self, connection: redis.Redis, job_id: str, *, ttl_s: int = LEASE_TTL_S,
                 holder: str = "step") -> None:
        self.connection = connection
        self.key = lease_key(job_id)
        self.ttl_s = ttl_s
        self.token = f"{holder}:{uuid.uuid4().hex}"  # who holds it, for `lease_holder`
        self.held = False
        self._stop = threading.Event()
        self._beat: threading.Thread | None = None

    def __enter__(self) -> Lease:
        self.held = bool(self.connection.set(self.key, self.token, nx=True, ex=self.ttl_s))
        if self.held:
            self._beat = threading.Thread(target=self._heartbeat, daemon=True,
                                          name=f"lease-{self.key}")
            self._beat.start()
        return self

    def _heartbeat(self) -> None:
        while not self._stop.wait(self.ttl_s / 3):
            try:
                if not self.connection.eval(_RENEW, 1, self.key, self.token, self.ttl_s):
                    log.warning("lost the lease", extra={"lease": self.key})
                    return
            except redis.RedisError:
                log.warning("could not renew the lease", extra={"lease": self.key})

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._beat is not None:
            self._beat.join(timeout=5)
        if self.held:
            try:
                self.connection.eval(_RELEASE, 1, self.key, self.token)
            except redis.RedisError:
                log.warning("could not release the lease; it expires by itself",
                            extra={"lease": self.key})


class RepoSlots:
    """At most `limit` jobs of one repository run at once; the others wait in arrival order."""

    def __init__(self, connection: redis.Redis, repo: str, limit: int) -> None:
        self.connection = connection
        self.holders = slots_key(repo)
        self.waiting = waiting_key(repo)
        self.limit = limit

    def acquire(self, job_id: str, *, still_running: Callable[[str], bool]) -> int:
        """0 when `job_id` may run now, else its position (1 = next) among the waiting jobs."""
        for holder in self.connection.zrange(self.holders, 0, -1):
            name = holder.decode() if isinstance(holder, bytes) else str(holder)
            if name != job_id and not still_running(name):
                self.connection.zrem(self.holders, name)  # it stopped at a gate or ended
        if self.connection.zscore(self.holders, job_id) is not None:
            return 0
        now = time.time()
        self.connection.zadd(self.waiting, {job_id: now}, nx=True)
        rank = self.connection.zrank(self.waiting, job_id)
        position = int(rank if isinstance(rank, int) else 0)
        free = self.limit - int(self.connection.zcard(self.holders) or 0)
        if position < free:
            with self.connection.pipeline(transaction=True) as pipe:
                pipe.zadd(self.holders, {job_id: now})
                pipe.zrem(self.waiting, job_id)
                pipe.execute()
            return 0
        return position - max(free, 0) + 1

    def release(self, job_id: str) -> str | None:
        """Give the slot up; returns the job that waits first, to wake it at once."""
        self.connection.zrem(self.holders, job_id)
        self.connection.zrem(self.waiting, job_id)
        first = self.connection.zrange(self.waiting, 0, 0)
        return (first[0].decode() if isinstance(first[0], bytes) else str(first[0])) \
            if first else None


class InstallationSlots(RepoSlots):
    """At most `limit` jobs of one installation run at once, whatever their repositories; the
    others wait in arrival order (`STEPWISE_MAX_RUNNING_PER_INSTALLATION`)."""

    def __init__(self, connection: redis.Redis, installation_id: int, limit: int) -> None:
        super().__init__(connection, f"installation:{installation_id}", limit)


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
        perform, args=(task, trace_payload(payload)), job_id=job_id, timeout=STEP_TIMEOUT_S, result_ttl=600,
        failure_ttl=7 * 24 * 3600, retry=Retry(max=len(BACKOFF_S), interval=list(BACKOFF_S)),
        pipeline=pipe)


@contextmanager
def job_lock(connection: redis.Redis, key: str, *, ttl_s: int = LOCK_TTL_S) -> Iterator[bool]:
    """Hold `key` while advancing a job; yields False (and holds nothing) when another has it."""
    token = uuid.uuid4().hex
    name = lock_key(key)
    acquired = bool(connection.set(name, token, nx=True, ex=ttl_s))
    try:
        yield acquired
    finally:
        if acquired:
            # Release only our own lock (compare-and-delete).
            connection.eval(_RELEASE, 1, name, token)


RECONNECT_BACKOFF_S = (1.0, 2.0, 4.0, 8.0, 15.0)  # then every 15 s until Redis answers
WORKER_TTL_MARGIN_S = 15  # RQ waits worker_ttl - 15 s for work (rq.worker.BaseWorker)


def run_worker(connect: Callable[[], redis.Redis], *, burst: bool = False,
               worker_class: type[BaseWorker] = Worker, dequeue_timeout_s: int = 405,
               reconnect_backoff_s: tuple[float, ...] = RECONNECT_BACKOFF_S,
               stop: threading.Event | None = None) -> bool:
    """Work the `stepwise` queue (with RQ's scheduler for delayed retries) with one of RQ's
    worker classes (bot/server/worker_classes.py), on connections made by `connect`.

    RQ's loop quits when Redis goes away mid-step or between steps (a timeout, or an error in
    its maintenance); this loop then waits for Redis with back-off and starts a new RQ worker,
    so an outage never ends the process. A stop request (SIGTERM, SIGINT) ends it as RQ's warm
    shutdown does: the step being run finishes first (docs/operating.md)."""
    stop = stop or threading.Event()
    worked = False
    while True:
        connection = connect()
        worker = worker_class([queue(connection)], connection=connection,
                              worker_ttl=dequeue_timeout_s + WORKER_TTL_MARGIN_S)
        # RQ's own retries while idle back off up to a minute: no longer than ours.
        worker.max_connection_wait_time = max(reconnect_backoff_s, default=1.0)
        try:
            worked = bool(worker.work(burst=burst, with_scheduler=True, logging_level="INFO")) \
                or worked
        except redis.RedisError as exc:  # registering or unregistering the worker failed
            log.warning("the RQ worker lost Redis", extra={"error": type(exc).__name__})
        if burst or stop.is_set() or stop_requested(worker):
            return worked
        log.warning("the RQ worker stopped without being asked to; waiting for Redis before "
                    "starting it again", extra={"worker": worker.name})
        if not wait_for_redis(connect, reconnect_backoff_s, stop):
            return worked
        try:  # RQ could not unregister it while Redis was away: its entry would linger
            worker.register_death()  # type: ignore[no-untyped-call]
        except redis.RedisError:
            log.warning("could not unregister the previous RQ worker; its entry expires")
        log.info("Redis answers again; the worker resumes", extra={"worker": worker.name})


def stop_requested(worker: BaseWorker) -> bool:
    """Whether RQ's worker was asked to stop (SIGTERM or SIGINT: RQ notes when, idle or busy)."""
    return bool(getattr(worker, "_stop_requested", False)
                or getattr(worker, "_shutdown_requested_date", None))


def wait_for_redis(connect: Callable[[], redis.Redis], backoff_s: tuple[float, ...],
                   stop: threading.Event) -> bool:
    """PING Redis with back-off until it answers (True) or a stop is requested (False). SIGTERM
    and SIGINT request the stop while it waits (RQ's own handlers only run inside its loop)."""
    previous = {sig: signal.signal(sig, lambda *_: stop.set())
                for sig in (signal.SIGTERM, signal.SIGINT)} \
        if threading.current_thread() is threading.main_thread() else {}
    try:
        attempt, client = 0, connect()
        while not stop.is_set():
            try:
                client.ping()
                return True
            except redis.RedisError as exc:
                wait = backoff_s[min(attempt, len(backoff_s) - 1)] if backoff_s else 1.0
                log.warning("Redis does not answer; trying again in %.0f s", wait,
                            extra={"error": type(exc).__name__, "attempt": attempt + 1})
                attempt += 1
                stop.wait(wait)
        return False
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
