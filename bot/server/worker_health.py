"""`stepwise worker --check`: the container's health probe for a worker.

A worker is healthy when RQ has a live registration for it: one on this host (the container's
hostname) whose key has not expired. RQ renews the key at every wait for work and before each
step for that step's whole timeout, so a worker that hangs, lost Redis for good or exited shows
up as missing once its TTL runs out. Exit 0 when healthy, 1 otherwise, with one line saying why.
"""

from __future__ import annotations

import socket

import redis
from rq import Worker

from bot.plumbing.queue import queue


def check_worker(connection: redis.Redis, *, hostname: str | None = None) -> tuple[bool, str]:
    """Whether a live RQ worker of the `stepwise` queue is registered from `hostname`."""
    host = hostname or socket.gethostname()
    try:
        workers = Worker.all(queue=queue(connection))
    except redis.RedisError as exc:
        return False, f"Redis does not answer ({type(exc).__name__}); the worker is waiting for it"
    mine = [w for w in workers if w.hostname == host]
    if not mine:
        return False, f"no worker registered from {host} (of {len(workers)} on the queue)"
    states = ", ".join(f"{w.name} {w.get_state()}" for w in mine)
    return True, f"ok: {states}"
