"""Leases and lines in Redis: who advances a job (or handles a delivery) now, renewed by a
heartbeat while the work runs (`Lease`); short locks (`job_lock`); and the running and waiting
lines of a repository or an installation (`RepoSlots`, `InstallationSlots`)."""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import redis

from bot.plumbing.keys import installation_line, lease_key, lock_key, slots_key, waiting_key

LOCK_TTL_S = 900
log = logging.getLogger(__name__)


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
        super().__init__(connection, installation_line(installation_id), limit)


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
