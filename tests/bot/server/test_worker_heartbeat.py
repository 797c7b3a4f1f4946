"""Workers counted truthfully: each real `stepwise worker` beats every 10 s, and one that is
SIGKILLed while busy drops out of `stepwise_workers` (GET /metrics of a real `stepwise serve`)
and out of `stepwise worker --check` within BEAT_TTL_S (about half a minute), not after RQ's
registration expires (up to an hour for a busy worker)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from pathlib import Path

import httpx
import pytest
import redis
from rq import Queue

from bot.plumbing.worker_beats import BEAT_TTL_S, live_workers
from tests.kit.github import FakeGitHub
from tests.kit.redis_server import running_redis
from tests.kit.stepwise_procs import STEPWISE, app_env, stepwise_serve, stepwise_worker, stop

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(240)]
DROPS_WITHIN_S = 60.0


def workers_metric(web: str) -> dict[str, int]:
    text = httpx.get(f"{web}/metrics", timeout=10).text
    return {m[1]: int(float(m[2])) for m in
            re.finditer(r'^stepwise_workers\{state="([a-z]+)"\} (\S+)$', text, re.MULTILINE)}


def wait(predicate: object, timeout: float, what: str) -> float:
    started = time.monotonic()
    while not predicate():  # type: ignore[operator]
        assert time.monotonic() - started < timeout, what
        time.sleep(0.5)
    return time.monotonic() - started


def check(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(STEPWISE), "worker", "--check"], env=env, capture_output=True,
                          text=True, timeout=60, check=False)


def test_a_sigkilled_busy_worker_drops_out_within_a_minute(tmp_path: Path) -> None:
    with running_redis() as url, FakeGitHub(root=tmp_path / "github") as gh:
        env = app_env(url, tmp_path / "work", gh)
        connection = redis.Redis.from_url(url)
        with stepwise_serve(env, tmp_path / "web.log") as web:
            workers = [stepwise_worker(env, tmp_path / f"worker-{n}.log") for n in (1, 2)]
            try:
                wait(lambda: workers_metric(web).get("idle") == 2, 60, "two idle workers")
                healthy = check(env)
                assert healthy.returncode == 0 and healthy.stdout.startswith("ok: "), healthy
                # One worker takes a long task (any importable function runs as RQ runs it).
                Queue("stepwise", connection=connection).enqueue("time.sleep", 600)
                wait(lambda: workers_metric(web) == {"idle": 1, "busy": 1}, 30, "one busy")
                [busy] = [w for w in live_workers(connection) if w.state == "busy"]
                victim = next(p for p in workers if busy.name.endswith(f":{p.pid}"))
                os.kill(victim.pid, signal.SIGKILL)
                victim.wait()
                took = wait(lambda: workers_metric(web) == {"idle": 1, "busy": 0},
                            DROPS_WITHIN_S, "the killed worker still counted")
                assert took <= BEAT_TTL_S + 5
                assert check(env).returncode == 0  # the other worker of this host is alive
                survivor = next(p for p in workers if p is not victim)
                os.kill(survivor.pid, signal.SIGKILL)
                survivor.wait()
                wait(lambda: check(env).returncode == 1, DROPS_WITHIN_S, "--check still 0")
                failed = check(env)
                assert "no worker of" in failed.stderr and "has beaten" in failed.stderr
                assert workers_metric(web) == {"idle": 0, "busy": 0}
            finally:
                for process in workers:
                    stop(process)
