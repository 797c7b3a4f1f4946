"""Ended jobs kept in Redis, as an installation that has run for months holds them: what the
idle-cost benchmark (bench/idle_cost.py) and its test (tests/bot/server/test_idle_history.py)
fill a real redis-server with. They ended within the retention period (`retain_ended_days`,
bot/server/retention.py), as every job kept does: an older one is for the reconciler to prune,
and its first pass would spend thousands of commands on pruning 200 of them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import redis

from bot.plumbing.redis_store import RedisStore
from bot.settings import Settings
from jobs.kernel.model import JobStatus
from tests.kit.records import make_batch, make_job

RETAINED_DAYS = int(Settings.model_fields["retain_ended_days"].default)


def keep_ended_jobs(client: redis.Redis, ended: int) -> None:
    """Save `ended` completed jobs of three batches each, over 50 repositories, that ended
    over the retention period up to a day before its end."""
    store = RedisStore(client)
    now = datetime.now(UTC)
    for number in range(1, ended + 1):
        job = make_job(number=number, status=JobStatus.COMPLETED,
                       batches=[make_batch(n) for n in (1, 2, 3)])
        job.repo = f"octo/repo-{number % 50:02d}"
        job.created_at = job.updated_at = now - timedelta(days=number % (RETAINED_DAYS - 1),
                                                          minutes=number % 1440)
        store.save(job)
