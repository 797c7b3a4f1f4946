"""Idle cost does not grow with history (issue 45, item 6), with real processes: an idle
`stepwise worker` (its reaper and reconciler every second) on a real redis-server holding 2,000
ended jobs asks Redis about as much per reconciler pass as one holding none, and never reads an
ended job's document, because the reaper and the reconciler read the index of active jobs, never
every job kept (bench/idle_cost.py measures the same at 8,000 jobs with the production
intervals).

The commands are counted over a number of passes, each seen as it ends (every pass asks for the
retention round), not over a span of time: a loaded machine makes fewer passes in a given time,
and a pass late by a second would fall into one run's span and not the other's."""

from __future__ import annotations

from pathlib import Path

import redis

from bot.plumbing.keys import JOBS, RETENTION_ROUND, job_key
from tests.kit.github import FakeGitHub
from tests.kit.history import keep_ended_jobs
from tests.kit.redis_server import running_redis
from tests.kit.stepwise_procs import app_env, stepwise_worker, stop

INTERVAL_S = 1
WARM_PASSES = 2  # the worker started, reaped and reconciled
PASSES = 5
QUIET_LIMIT_S = 30  # no command at all for this long: the worker is stuck or gone


def idle_commands(url: str, gh: FakeGitHub, work: Path) -> list[str]:
    """The Redis commands an idle worker sends over PASSES reconciler passes, after its first
    WARM_PASSES (Redis's MONITOR, which shows every command any client sends)."""
    env = app_env(url, work, gh, STEPWISE_REAP_INTERVAL_S=str(INTERVAL_S),
                  STEPWISE_RECONCILE_INTERVAL_S=str(INTERVAL_S))
    log = work.parent / f"{work.name}.log"
    watcher = redis.Redis.from_url(url, socket_timeout=QUIET_LIMIT_S)
    seen: list[str] = []
    passes = 0
    with watcher.monitor() as monitor:
        worker = stepwise_worker(env, log)
        try:
            while passes < WARM_PASSES + PASSES:
                try:
                    command = monitor.next_command()["command"]
                except redis.TimeoutError:
                    raise AssertionError(log.read_text()[-3000:]) from None
                if command.split(" ", 2)[:2] == ["SET", RETENTION_ROUND]:  # a pass ends
                    passes += 1
                elif passes >= WARM_PASSES:
                    seen.append(command)
            assert worker.poll() is None, log.read_text()[-3000:]
        finally:
            stop(worker)
    watcher.close()
    return seen


def test_an_idle_worker_asks_redis_no_more_with_2000_ended_jobs_kept(tmp_path: Path) -> None:
    with running_redis() as url, FakeGitHub(root=tmp_path / "github") as gh:
        client = redis.Redis.from_url(url)
        seen = {}
        for ended in (0, 2000):
            client.flushall()
            keep_ended_jobs(client, ended)
            work = tmp_path / f"work-{ended}"
            work.mkdir()
            seen[ended] = idle_commands(url, gh, work)
        kept = int(client.zcard(JOBS))
        client.close()
    counts = {ended: len(commands) for ended, commands in seen.items()}
    # A scan of every kept job would cost thousands of commands a pass (2,382 a second at 8,000
    # jobs before the index); reading the index costs the same with or without history.
    assert counts[0] > 0, counts
    assert counts[2000] <= 2 * counts[0] + 50, counts
    ended_documents = job_key("")
    assert [c for c in seen[2000] if ended_documents in c] == [], counts
    assert kept == 2000  # kept within the retention period: none was pruned meanwhile
