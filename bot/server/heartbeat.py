"""A worker's heartbeat thread: every HEARTBEAT_S it records the worker's state (idle, busy)
for the `stepwise_workers` metric and `stepwise worker --check` (bot/plumbing/worker_beats.py),
and checks the data marker: a Redis that lost its data (restarted without its append-only file,
flushed, replaced) no longer holds it. Then every worker registers with RQ again, and the one
that sets the marker anew rebuilds the jobs from GitHub (bot/server/rebuild.py `recover_jobs`).

A worker that starts on a Redis without the marker and without jobs recovers too: a fresh Redis
and an emptied one look alike, and recovering in an empty installation finds nothing to rebuild.
One that starts on jobs without the marker (written before the marker existed) only sets it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
import uuid
from collections.abc import Callable

import redis
from rq import worker_registration
from rq.worker import BaseWorker

from bot.plumbing.connections import as_text
from bot.plumbing.keys import DATA_MARKER, JOBS
from bot.plumbing.worker_beats import HEARTBEAT_S, beat, forget

log = logging.getLogger(__name__)


def check_marker(connection: redis.Redis, seen: str | None) -> tuple[str, bool, bool]:
    """(the marker now, whether Redis lost its data since `seen`, whether this caller set the
    marker anew and is the one to recover).

    A worker starting on a Redis without the marker but with jobs runs on data an older
    version wrote (before the marker existed): it sets the marker and recovers nothing."""
    value = as_text(connection.get(DATA_MARKER))
    if value:
        return value, seen is not None and value != seen, False
    fresh = uuid.uuid4().hex
    upgraded = seen is None and bool(connection.exists(JOBS))
    if connection.set(DATA_MARKER, fresh, nx=True):
        return fresh, seen is not None, not upgraded
    return as_text(connection.get(DATA_MARKER)), seen is not None, False


class Heartbeat:
    """The beat of one worker process; `worker` is the RQ worker running now (run_worker sets
    it, and sets it again when it starts a new one after an outage)."""

    def __init__(self, connection: redis.Redis, *, recover: Callable[[], object],
                 host: str | None = None) -> None:
        self.connection = connection
        self.recover = recover
        self.host = host or socket.gethostname()
        self.name = f"{self.host}:{os.getpid()}"
        self.worker: BaseWorker | None = None
        self.seen: str | None = None
        self.failing = False

    def tick(self) -> None:
        worker = self.worker
        raw = worker.get_state() if worker is not None else "starting"
        state = str(getattr(raw, "value", raw) or "idle")  # RQ's WorkerStatus is a str enum
        beat(self.connection, self.name, state=state, host=self.host)
        self.seen, lost, leader = check_marker(self.connection, self.seen)
        if lost:
            self.register_again()
        if leader:
            log.warning("Redis holds no Stepwise data marker (it lost its data, or is new): "
                        "rebuilding jobs from GitHub", extra={"worker": self.name})
            threading.Thread(target=self._recover, daemon=True, name="recover").start()

    def register_again(self) -> None:
        """Put this worker back in RQ's registry (the metric and the check count beats, but
        RQ's own listing and its scheduler lock were lost too)."""
        worker = self.worker
        if worker is None:
            return
        log.warning("Redis lost its data: registering the worker again",
                    extra={"worker": worker.name})
        try:  # RQ's own heartbeat may have written its hash back already: write it whole
            with worker.connection.pipeline() as pipe:
                pipe.hset(worker.key, mapping=worker.serialize())
                worker_registration.register(worker, pipe)
                pipe.expire(worker.key, int(worker.worker_ttl) + 60)
                pipe.execute()
        except redis.RedisError as exc:
            log.warning("could not register the worker again", extra={
                "worker": worker.name, "error": type(exc).__name__})

    def _recover(self) -> None:
        try:
            self.recover()
        except Exception:  # a failed recovery is logged; the next command rebuilds its job
            log.exception("rebuilding jobs after Redis lost its data failed")

    def run(self, stop: threading.Event, *, every_s: float = HEARTBEAT_S) -> None:
        """Beat until `stop`; one log line when Redis stops answering and one when it is back."""
        while True:
            try:
                self.tick()
                if self.failing:
                    log.info("heartbeat: Redis answers again", extra={"worker": self.name})
                self.failing = False
            except redis.RedisError as exc:
                if not self.failing:
                    log.warning("heartbeat: Redis does not answer",
                                extra={"worker": self.name, "error": type(exc).__name__})
                self.failing = True
            if stop.wait(every_s):
                break
        with contextlib.suppress(redis.RedisError):
            forget(self.connection, self.name)
