"""The worker side of RQ: the task handlers a worker installs, the one function RQ runs
(`perform`, found by the entry-point name stored with every queued task: `StableJob`,
bot.plumbing.queue.ENTRY_POINTS), the
worker loop that outlives Redis outages, which of RQ's worker classes runs it, and its health
probe.

The engine package never imports `bot/`: the entry point that starts a worker installs the
task handlers (`install_handlers`); the web app queues tasks by name (bot/plumbing/queue.py).

Worker classes (`stepwise worker --worker-class`, or STEPWISE_WORKER_CLASS): RQ's own choice of
how a task runs, named as RQ's `--worker-class` names it.
- `rq.worker.SimpleWorker` (the default): each task runs in the worker process itself. What a
  step builds once stays built for the next one: the installation's GitHub client (its TLS
  context) and token, the store's knowledge of what it last wrote, imported modules. A worker
  killed mid-step is the same as a killed work horse: its lease expires and another worker's
  reaper resumes the job (docs/reliability.md).
- `rq.worker.Worker`: RQ forks a work horse per task (isolation from the step's memory
  growth, at the price of rebuilding those clients every step).
Any importable subclass of RQ's BaseWorker is accepted; anything else is refused with the fix.

Health (`stepwise worker --check`, the container's probe): a worker is healthy when one of this
host (the container's hostname) has beaten within BEAT_TTL_S (bot/server/heartbeat.py; RQ's own
registration lasts a step's whole timeout, so a killed worker would stay listed up to an hour).
Exit 0 when healthy, 1 otherwise, with one line saying why.
"""

from __future__ import annotations

import logging
import signal
import socket
import threading
from collections.abc import Callable, Mapping
from typing import Any

import redis
from rq import Worker
from rq.job import Job as RQJob
from rq.utils import import_worker_class
from rq.worker import BaseWorker

from bot.github import clone_use
from bot.log_context import split_trace, traced
from bot.plumbing.queue import ENTRY_POINTS, queue
from bot.plumbing.worker_beats import BEAT_TTL_S, live_workers
from bot.server.heartbeat import Heartbeat
from jobs.basics.errors import BadInputError

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
    try:
        if trace is None:
            handler(payload)
            return
        with traced(trace["delivery_id"], trace["trigger"]):
            handler(payload)
    finally:
        clone_use.release_all()  # the clones this task used may be deleted now


class StableJob(RQJob):
    """An RQ job whose function is found by its entry-point name (bot.plumbing.queue
    ENTRY_POINTS: today's and former names all run `perform`), not imported from wherever the
    code lives now; other names are imported as RQ does."""

    @property
    def func(self) -> Any:
        if self.func_name in ENTRY_POINTS and not self.instance:
            return perform
        return super().func


RECONNECT_BACKOFF_S = (1.0, 2.0, 4.0, 8.0, 15.0)  # then every 15 s until Redis answers
WORKER_TTL_MARGIN_S = 15  # RQ waits worker_ttl - 15 s for work (rq.worker.BaseWorker)


def run_worker(connect: Callable[[], redis.Redis], *, burst: bool = False,
               worker_class: type[BaseWorker] = Worker, dequeue_timeout_s: int = 405,
               reconnect_backoff_s: tuple[float, ...] = RECONNECT_BACKOFF_S,
               stop: threading.Event | None = None, heartbeat: Heartbeat | None = None) -> bool:
    """Work the `stepwise` queue (with RQ's scheduler for delayed retries) with one of RQ's
    worker classes (`worker_class`), on connections made by `connect`.

    RQ's loop quits when Redis goes away mid-step or between steps (a timeout, or an error in
    its maintenance); this loop then waits for Redis with back-off and starts a new RQ worker,
    so an outage never ends the process. A stop request (SIGTERM, SIGINT) ends it as RQ's warm
    shutdown does: the step being run finishes first (docs/operating.md)."""
    stop = stop or threading.Event()
    worked = False
    while True:
        connection = connect()
        worker = worker_class([queue(connection)], connection=connection, job_class=StableJob,
                              worker_ttl=dequeue_timeout_s + WORKER_TTL_MARGIN_S)
        if heartbeat is not None:  # it reports this worker's state and re-registers it
            heartbeat.worker = worker
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


DEFAULT_WORKER_CLASS = "rq.worker.SimpleWorker"
KNOWN = ("rq.worker.SimpleWorker", "rq.worker.Worker", "rq.worker.SpawnWorker")


def worker_class(name: str | None) -> type[BaseWorker]:
    """RQ's worker class of a dotted name (None or empty: the default)."""
    dotted = (name or "").strip() or DEFAULT_WORKER_CLASS
    try:
        return import_worker_class(dotted)
    except (ImportError, AttributeError, ValueError, TypeError) as exc:
        raise BadInputError(
            f"`{dotted}` is not an RQ worker class ({type(exc).__name__}: {str(exc)[:200]})",
            hint=f"name a subclass of rq.worker.BaseWorker by its dotted path, e.g. "
            f"{' or '.join(KNOWN[:2])} (STEPWISE_WORKER_CLASS, `--worker-class`)",
        ) from None


def check_worker(connection: redis.Redis, *, hostname: str | None = None) -> tuple[bool, str]:
    """Whether a worker of this host (`hostname`) has beaten within BEAT_TTL_S."""
    host = hostname or socket.gethostname()
    try:
        workers = live_workers(connection)
    except redis.RedisError as exc:
        return False, f"Redis does not answer ({type(exc).__name__}); the worker is waiting for it"
    mine = [w for w in workers if w.host == host]
    if not mine:
        return False, (f"no worker of {host} has beaten in the last {BEAT_TTL_S:.0f} s (of "
                       f"{len(workers)} live on the queue)")
    states = ", ".join(f"{w.name} {w.state}" for w in mine)
    return True, f"ok: {states}"
