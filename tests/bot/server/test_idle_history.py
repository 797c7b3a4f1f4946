"""Idle cost does not grow with history (issue 45, item 6), with real processes: an idle
`stepwise worker` (its reaper and reconciler every second) on a real redis-server holding 2,000
ended jobs asks Redis about as much as one holding none, because the reaper and the reconciler
read the index of active jobs, never every job kept (bench/idle_cost.py measures the same at
8,000 jobs with the production intervals)."""

from __future__ import annotations

import time
from pathlib import Path

import redis

from tests.kit.github import FakeGitHub
from tests.kit.history import keep_ended_jobs
from tests.kit.redis_server import running_redis
from tests.kit.stepwise_procs import app_env, stepwise_worker, stop

INTERVAL_S = 1
WINDOW_S = 6.0


def idle_commands(url: str, gh: FakeGitHub, work: Path) -> int:
    """Redis commands an idle worker sends in WINDOW_S, after its first passes."""
    env = app_env(url, work, gh, STEPWISE_REAP_INTERVAL_S=str(INTERVAL_S),
                  STEPWISE_RECONCILE_INTERVAL_S=str(INTERVAL_S))
    client = redis.Redis.from_url(url)
    worker = stepwise_worker(env, work.parent / f"{work.name}.log")
    try:
        time.sleep(INTERVAL_S * 4)  # started, reaped and reconciled a few times
        assert worker.poll() is None, (work.parent / f"{work.name}.log").read_text()[-3000:]
        before = int(client.info("stats")["total_commands_processed"])
        time.sleep(WINDOW_S)
        return int(client.info("stats")["total_commands_processed"]) - before - 1
    finally:
        stop(worker)
        client.close()


def test_an_idle_worker_asks_redis_no_more_with_2000_ended_jobs_kept(tmp_path: Path) -> None:
    with running_redis() as url, FakeGitHub(root=tmp_path / "github") as gh:
        client = redis.Redis.from_url(url)
        counts = {}
        for ended in (0, 2000):
            client.flushall()
            keep_ended_jobs(client, ended)
            work = tmp_path / f"work-{ended}"
            work.mkdir()
            counts[ended] = idle_commands(url, gh, work)
        client.close()
    # A scan of every kept job would cost thousands of commands a pass (2,382 a second at 8,000
    # jobs before the index); reading the index costs the same with or without history.
    assert counts[0] > 0, counts
    assert counts[2000] <= 2 * counts[0] + 50, counts
