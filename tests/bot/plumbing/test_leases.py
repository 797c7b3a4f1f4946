"""Leases (bot/plumbing/leases.py) against a real Redis: renewed by their heartbeat while held,
exclusive, and gone within their TTL once their holder dies."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import redis

from bot.plumbing.keys import lease_key
from bot.plumbing.leases import Lease
from tests.kit.waiting import wait_until


def test_a_lease_is_renewed_while_held_and_excludes_others(redis_url: str) -> None:
    connection = redis.Redis.from_url(redis_url)
    with Lease(connection, "job-a", ttl_s=1) as first:
        assert first.held
        time.sleep(2.2)  # longer than the TTL: only the heartbeat keeps it
        assert connection.exists(lease_key("job-a"))
        with Lease(connection, "job-a", ttl_s=1) as second:
            assert not second.held
    assert not connection.exists(lease_key("job-a"))


def test_a_dead_holders_lease_expires(redis_url: str) -> None:
    code = ("import redis, sys, time; from bot.plumbing.leases import Lease\n"
            "lease = Lease(redis.Redis.from_url(sys.argv[1]), 'job-b', ttl_s=1).__enter__()\n"
            "print('held', flush=True); time.sleep(60)\n")
    holder = subprocess.Popen([sys.executable, "-c", code, redis_url], stdout=subprocess.PIPE)
    assert holder.stdout is not None and holder.stdout.readline().strip() == b"held"
    connection = redis.Redis.from_url(redis_url)
    assert connection.exists(lease_key("job-b"))
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    wait_until(lambda: not connection.exists(lease_key("job-b")), timeout=5,
               what="the dead holder's lease to expire")
