"""Idle cost against history (issue 45): an idle `stepwise worker` with N ended jobs kept.

    .venv/bin/python -m bench.idle_cost [--ended 8000] [--seconds 60] [--interval 20]

A real redis-server (append-only off), a real `stepwise worker` (its RQ scheduler process
included in its CPU), the fake GitHub for its settings. Two runs back to back: the baseline
with no job in Redis, then the same with `--ended` completed jobs written through the real
RedisStore (three batches each). In each run the worker idles for `--seconds` after a warm-up
of one reaper and reconciler interval (`--interval`, the production 20 s by default); printed:
the worker's CPU share (its process tree's user + system time over wall time) and Redis
commands per second (INFO stats), each with its ratio to the baseline. Before the reaper read
the index of active jobs, 8,000 ended jobs cost 37% of a core per worker and 2,382 commands/s.
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
import time
from pathlib import Path

import redis

from bench._common import STEPWISE, cpu_seconds, machine_facts, stepwise_env, stop
from tests.kit.chaos.killing import descendants
from tests.kit.github import FakeGitHub
from tests.kit.history import keep_ended_jobs
from tests.kit.redis_server import running_redis


def fill(url: str, ended: int) -> None:
    client = redis.Redis.from_url(url)
    client.flushall()
    keep_ended_jobs(client, ended)
    client.close()


def tree_cpu(pid: int) -> float:
    total = 0.0
    for member in descendants(pid):
        try:
            total += cpu_seconds(member)
        except (OSError, ValueError, IndexError):
            continue  # gone meanwhile
    return total


def idle_run(url: str, gh: FakeGitHub, work: Path, *, seconds: float, interval: int
             ) -> tuple[float, float]:
    """(CPU share of the idle worker's process tree, Redis commands per second)."""
    env = stepwise_env(app_id=gh.app_id, private_key=gh.private_key_pem, redis_url=url,
                       github_api_url=gh.base_url, workdir=work, reap_interval_s=interval,
                       reconcile_interval_s=interval, log_format="json")
    client = redis.Redis.from_url(url)
    with (work / "worker.log").open("ab") as log:
        worker = subprocess.Popen([str(STEPWISE), "worker"], env=env, stdout=log,
                                  stderr=subprocess.STDOUT, start_new_session=True)
    try:
        time.sleep(interval + 5)  # started, reaped and reconciled once
        cpu, commands = tree_cpu(worker.pid), int(client.info("stats")["total_commands_processed"])
        started = time.monotonic()
        time.sleep(seconds)
        wall = time.monotonic() - started
        used = tree_cpu(worker.pid) - cpu
        served = int(client.info("stats")["total_commands_processed"]) - commands - 1
        return used / wall, served / wall
    finally:
        stop(worker)
        client.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ended", type=int, default=8000)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--interval", type=int, default=20)
    args = parser.parse_args()
    print(machine_facts())
    with running_redis() as url, tempfile.TemporaryDirectory() as tmp, \
            FakeGitHub(root=Path(tmp) / "github") as gh:
        rows = []
        for ended in (0, args.ended):
            fill(url, ended)
            work = Path(tmp) / f"work-{ended}"
            work.mkdir()
            rows.append((ended, *idle_run(url, gh, work, seconds=args.seconds,
                                          interval=args.interval)))
    (_, base_cpu, base_cmds) = rows[0]
    print("ended jobs | worker CPU (share of a core) | ratio | Redis commands/s | ratio")
    for ended, cpu, cmds in rows:
        print(f"{ended:>10} | {cpu:>27.1%} | {cpu / max(base_cpu, 1e-6):>5.2f} | "
              f"{cmds:>16.1f} | {cmds / max(base_cmds, 1e-6):>5.2f}")


if __name__ == "__main__":
    main()
