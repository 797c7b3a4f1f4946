"""Workers' heartbeats: each live worker writes its state every HEARTBEAT_S (bot/server/heartbeat.py),
and a worker whose last beat is older than BEAT_TTL_S is not counted (the `stepwise_workers`
metric, `stepwise worker --check`). RQ's own registration lasts the dequeue timeout plus a
step's whole timeout (up to an hour), so a SIGKILLed worker would stay listed that long; a beat
drops out within BEAT_TTL_S.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import redis

from bot.plumbing.connections import as_text
from bot.plumbing.keys import WORKER_BEATS, WORKER_STATES

HEARTBEAT_S = 10.0
BEAT_TTL_S = 35.0  # three beats missed, and a little slack for a loaded machine


@dataclass(frozen=True)
class LiveWorker:
    name: str
    state: str  # idle, busy, ...
    host: str
    age_s: float  # since its last beat


def beat(connection: redis.Redis, name: str, *, state: str, host: str,
         now: float | None = None) -> None:
    """Record one beat of worker `name` (and forget workers silent for ten times the TTL)."""
    now = time.time() if now is None else now
    with connection.pipeline(transaction=False) as pipe:
        pipe.zadd(WORKER_BEATS, {name: now})
        pipe.hset(WORKER_STATES, name, f"{state} {host}")
        pipe.zremrangebyscore(WORKER_BEATS, "-inf", now - 10 * BEAT_TTL_S)
        pipe.execute()


def forget(connection: redis.Redis, name: str) -> None:
    """A worker that stops says so at once."""
    with connection.pipeline(transaction=False) as pipe:
        pipe.zrem(WORKER_BEATS, name)
        pipe.hdel(WORKER_STATES, name)
        pipe.execute()


def live_workers(connection: redis.Redis, *, now: float | None = None) -> list[LiveWorker]:
    """Workers whose last beat is younger than BEAT_TTL_S."""
    now = time.time() if now is None else now
    beats: list[Any] = list(connection.zrangebyscore(WORKER_BEATS, now - BEAT_TTL_S, "+inf",
                                                     withscores=True))
    if not beats:
        return []
    names = [as_text(name) for name, _ in beats]
    states = connection.hmget(WORKER_STATES, names)
    found = []
    for name, (_, at), raw in zip(names, beats, states, strict=True):
        state, _, host = as_text(raw).partition(" ")
        found.append(LiveWorker(name=name, state=state or "unknown", host=host,
                                age_s=max(0.0, now - float(at))))
    return found
