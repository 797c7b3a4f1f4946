"""A worker's Redis connections (bot/plumbing/connections.py) and its loop (bot.server.worker.
run_worker): an idle worker waits for work without a single Redis error and starts a step
queued afterwards at once; it rides out a Redis outage without exiting and resumes.

Real `stepwise worker` processes, a real redis-server, the fake GitHub (for the App's key)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from rq import Worker
from rq.job import Job as RQJob

from bot.plumbing.queue import enqueue, queue
from tests.kit.chaos.redis_proc import RedisServer
from tests.kit.github import FakeGitHub
from tests.kit.github_auth import generate_app_key
from tests.kit.github_rate_limits import WORLD_WRITE_BURST
from tests.kit.waiting import wait_until

STEPWISE = Path(sys.executable).parent / "stepwise"
DEQUEUE_TIMEOUT_S = 2  # an idle worker's blocking wait, shortened from RQ's 405 s
PROBLEMS = ("ERROR", "could not connect", "Traceback", "TimeoutError", "quitting")


@pytest.fixture(scope="module")
def gh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FakeGitHub]:
    private, public = generate_app_key()
    with FakeGitHub(root=tmp_path_factory.mktemp("gh"), public_key=public,
                    private_key=private) as fake:
        yield fake


def worker_env(gh: FakeGitHub, redis_url: str, workdir: Path, **extra: str) -> dict[str, str]:
    """A worker's environment: no webhook secret (workers do not need it)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("STEPWISE_")}
    return {**env, "STEPWISE_APP_ID": str(gh.app_id), "STEPWISE_PRIVATE_KEY": gh.private_key_pem,
            "STEPWISE_REDIS_URL": redis_url, "STEPWISE_GITHUB_API_URL": gh.base_url,
            "STEPWISE_WORKDIR": str(workdir), "STEPWISE_ALLOW_UNSANDBOXED": "true",
            "STEPWISE_GITHUB_WRITE_BURST": str(WORLD_WRITE_BURST),
            "STEPWISE_DEQUEUE_TIMEOUT_S": str(DEQUEUE_TIMEOUT_S),
            # Ordinary calls give up after 1 s: the blocking wait must not use that timeout.
            "STEPWISE_REDIS_SOCKET_TIMEOUT_S": "1", **extra}


def start_worker(env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        return subprocess.Popen([str(STEPWISE), "worker"], env=env, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)


def stop_worker(process: subprocess.Popen[bytes]) -> int:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            return process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
    return process.wait()


def registered(connection: redis.Redis) -> list[Worker]:
    return list(Worker.all(queue=queue(connection)))


def start_delay_s(connection: redis.Redis) -> float:
    """Queue a reconcile pass (harmless on an empty Redis) and return how long it waited in the
    queue before a worker started it."""
    task = enqueue(connection, "reconcile", {}, retry=False)
    assert task is not None
    wait_until(lambda: task.get_status(refresh=True) in ("finished", "failed"), timeout=15,
               what="the queued step to run")
    fetched = RQJob.fetch(task.id, connection=connection)
    assert fetched.get_status() == "finished", fetched.exc_info
    assert fetched.enqueued_at is not None and fetched.started_at is not None
    return (fetched.started_at - fetched.enqueued_at).total_seconds()


def problems(log: Path) -> list[str]:
    return [line for line in log.read_text(errors="replace").splitlines()
            if any(word in line for word in PROBLEMS)]


@pytest.mark.integration
@pytest.mark.slow  # 12-20 s: real waits run out
def test_an_idle_worker_logs_no_error_and_starts_a_step_queued_later_at_once(
        gh: FakeGitHub, tmp_path: Path) -> None:
    server = RedisServer(tmp_path / "redis")
    server.start()
    connection = redis.Redis.from_url(server.url)
    log = tmp_path / "worker.log"
    env = worker_env(gh, server.url, tmp_path / "work")
    process = start_worker(env, log)
    try:
        wait_until(lambda: len(registered(connection)) == 1, timeout=30, what="the worker")
        time.sleep(3 * DEQUEUE_TIMEOUT_S + 1)  # three blocking waits run out while idle
        assert process.poll() is None, log.read_text()
        assert problems(log) == [], log.read_text()
        assert start_delay_s(connection) < 1.0
        assert problems(log) == [], log.read_text()
        probe = subprocess.run([str(STEPWISE), "worker", "--check"], env=env, text=True,
                               capture_output=True, timeout=60, check=False)
        assert probe.returncode == 0 and probe.stdout.startswith("ok: "), probe
    finally:
        assert stop_worker(process) == 0, log.read_text()
        connection.close()
        server.stop()


@pytest.mark.integration
@pytest.mark.slow  # 12-20 s: real waits run out
def test_a_worker_rides_out_a_redis_outage_and_resumes(gh: FakeGitHub, tmp_path: Path) -> None:
    server = RedisServer(tmp_path / "redis")
    server.start()
    connection = redis.Redis.from_url(server.url)
    log = tmp_path / "worker.log"
    process = start_worker(worker_env(gh, server.url, tmp_path / "work"), log)
    try:
        wait_until(lambda: len(registered(connection)) == 1, timeout=30, what="the worker")
        server.stop()
        time.sleep(4)  # longer than the ordinary-call timeout and the dequeue timeout
        assert process.poll() is None, log.read_text()
        server.start()  # same port, same append-only file
        back = time.monotonic()
        start_delay_s(connection)  # the first step after the outage runs ...
        assert time.monotonic() - back < 20, log.read_text()  # ... within the back-off's cap
        assert process.poll() is None, log.read_text()
        assert start_delay_s(connection) < 1.0  # and the worker waits for work as before
        assert process.poll() is None, log.read_text()
    finally:
        assert stop_worker(process) == 0, log.read_text()
        connection.close()
        server.stop()


SLOW_WORKER = """
import sys, time, redis
from bot.server.worker import install_handlers, run_worker
url = sys.argv[1]
def slow(payload):
    time.sleep(payload["seconds"])
    redis.Redis.from_url(url).set("slow-step-finished", "1")
install_handlers({"slow": slow})
run_worker(lambda: redis.Redis.from_url(url), dequeue_timeout_s=5)
print("worker exited")
"""


@pytest.mark.integration
def test_sigterm_lets_the_running_step_finish_then_the_worker_exits(tmp_path: Path) -> None:
    """What `docker stop` (and Kubernetes) do: SIGTERM, then SIGKILL after the grace period.
    The step under way finishes and the worker exits 0 instead of abandoning it."""
    server = RedisServer(tmp_path / "redis")
    server.start()
    connection = redis.Redis.from_url(server.url)
    log = tmp_path / "worker.log"
    with log.open("wb") as out:
        process = subprocess.Popen([sys.executable, "-c", SLOW_WORKER, server.url], stdout=out,
                                   stderr=subprocess.STDOUT, start_new_session=True)
    try:
        task = enqueue(connection, "slow", {"seconds": 3}, retry=False)
        assert task is not None
        wait_until(lambda: task.get_status(refresh=True) == "started", timeout=30,
                   what="the step to start")
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=20) == 0, log.read_text()
        assert connection.get("slow-step-finished") == b"1", log.read_text()
        assert task.get_status(refresh=True) == "finished"
        assert "worker exited" in log.read_text()
        assert registered(connection) == []  # it unregistered: no stale worker left behind
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
        connection.close()
        server.stop()
