"""Redis with a password: the store and RQ work through `STEPWISE_REDIS_URL` with credentials, a
wrong password is refused, and the password never reaches a log line."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator

import pytest
from redis import Redis
from redis.exceptions import AuthenticationError, ResponseError
from rq import Queue

from bot.observability.logs import install_filter
from bot.plumbing.redis_store import RedisStore
from jobs.basics.redact import redact
from tests.kit.burst_worker import BurstWorker
from tests.kit.records import make_job
from tests.kit.redis_server import running_redis

PASSWORD = "s3cret-redis-pw"


@pytest.fixture(scope="module")
def locked_redis() -> Iterator[str]:
    with running_redis(password=PASSWORD) as url:
        yield url


def test_the_store_and_rq_work_with_credentials_in_the_url(locked_redis: str) -> None:
    assert f":{PASSWORD}@" in locked_redis
    connection = Redis.from_url(locked_redis)
    store = RedisStore(connection)
    job = make_job()
    store.save(job)
    loaded = store.load_id(job.id)
    assert loaded is not None and loaded.id == job.id
    queue = Queue("stepwise-test", connection=connection)
    done = queue.enqueue(len, "four")
    BurstWorker([queue], connection=connection).work(burst=True)
    assert done.refresh() is None and done.return_value() == 4


def test_without_the_password_nothing_is_answered(locked_redis: str) -> None:
    anonymous = locked_redis.replace(f":{PASSWORD}@", "")
    with pytest.raises((AuthenticationError, ResponseError)):
        Redis.from_url(anonymous).get("anything")
    with pytest.raises((AuthenticationError, ResponseError)):
        Redis.from_url(locked_redis.replace(PASSWORD, "wrong")).get("anything")


def test_the_password_is_redacted_from_logs(locked_redis: str) -> None:
    assert PASSWORD not in redact(f"connecting to {locked_redis}")
    stream = io.StringIO()
    logger = logging.getLogger("stepwise.test.redis-password")
    handler = logging.StreamHandler(stream)
    logger.addHandler(handler)
    try:
        install_filter(logger)
        logger.warning("redis at %s is slow", locked_redis)
    finally:
        logger.removeHandler(handler)
    assert "redis at redis://" in stream.getvalue()
    assert PASSWORD not in stream.getvalue()
