"""Ended jobs kept in Redis, as an installation that has run for months holds them: what the
idle-cost benchmark (bench/idle_cost.py) and its test (tests/bot/server/test_idle_history.py)
fill a real redis-server with."""

from __future__ import annotations

import redis

from bot.plumbing.redis_store import RedisStore
from jobs.kernel.model import JobStatus
from tests.kit.records import make_batch, make_job


def keep_ended_jobs(client: redis.Redis, ended: int) -> None:
    """Save `ended` completed jobs of three batches each, over 50 repositories."""
    store = RedisStore(client)
    for number in range(1, ended + 1):
        job = make_job(number=number, status=JobStatus.COMPLETED,
                       batches=[make_batch(n) for n in (1, 2, 3)])
        job.repo = f"octo/repo-{number % 50:02d}"
        store.save(job)
