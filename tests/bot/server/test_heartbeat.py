"""The data marker on a real Redis: who recovers, and when (bot/server/heartbeat.py)."""

from __future__ import annotations

import redis

from bot.plumbing.keys import DATA_MARKER, JOBS
from bot.server.heartbeat import check_marker


def test_a_fresh_redis_is_recovered_once_an_older_versions_data_is_only_marked(
        redis_url: str) -> None:
    connection = redis.Redis.from_url(redis_url)
    connection.flushdb()
    marker, lost, leader = check_marker(connection, None)  # first worker, empty Redis
    assert (lost, leader) == (False, True)
    assert check_marker(connection, None) == (marker, False, False)  # the second worker
    connection.flushdb()
    connection.zadd(JOBS, {"1-abc": 1.0})  # jobs an older version wrote, no marker yet
    marker, lost, leader = check_marker(connection, None)
    assert (lost, leader) == (False, False) and connection.get(DATA_MARKER)


def test_every_worker_that_saw_the_marker_notices_its_loss_one_recovers(redis_url: str) -> None:
    connection = redis.Redis.from_url(redis_url)
    connection.flushdb()
    first, _, _ = check_marker(connection, None)
    connection.flushdb()
    connection.zadd(JOBS, {"1-abc": 1.0})  # a step saved a job before the heartbeat looked
    second, lost, leader = check_marker(connection, first)
    assert second != first and (lost, leader) == (True, True)
    assert check_marker(connection, first) == (second, True, False)  # another worker
    assert check_marker(connection, second) == (second, False, False)
    connection.flushdb()
