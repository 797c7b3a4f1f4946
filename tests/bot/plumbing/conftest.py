"""What the tests of bot/plumbing share: a flushed connection to the session's real redis-server."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import redis


@pytest.fixture
def client(redis_url: str) -> Iterator[redis.Redis]:
    connection = redis.Redis.from_url(redis_url)
    connection.flushdb()
    yield connection
    connection.flushdb()
    connection.close()
