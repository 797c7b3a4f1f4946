"""A hung Redis (a partition without resets: redis-server stopped with SIGSTOP) never freezes the
real `stepwise serve` process: concurrent webhooks get 503 with Retry-After and `/healthz` says
Redis does not answer, each within about 3 s (GitHub counts a delivery failed after 10 s)."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from tests.kit.redis_server import free_port, redis_binary
from tests.kit.stepwise_procs import SECRET, base_env, stepwise_serve
from tests.kit.webhooks import deliver, make_event

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]
ANSWER_WITHIN_S = 3.0  # the 2 s deadline plus a loaded machine's slack
CONCURRENT = 8


@contextmanager
def stoppable_redis(tmp_path: Path) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    port = free_port()
    process = subprocess.Popen([redis_binary(), "--bind", "127.0.0.1", "--port", str(port),
                                "--save", "", "--appendonly", "no", "--dir", str(tmp_path)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        yield f"redis://127.0.0.1:{port}/0", process
    finally:
        os.kill(process.pid, signal.SIGCONT)
        process.terminate()
        process.wait(timeout=10)


def timed(call: object) -> tuple[float, httpx.Response]:
    started = time.monotonic()
    response = call()  # type: ignore[operator]
    return time.monotonic() - started, response


def test_a_hung_redis_gets_503_and_an_honest_healthz_within_the_deadline(tmp_path: Path) -> None:
    with stoppable_redis(tmp_path) as (url, redis_process), \
            stepwise_serve(base_env(url, tmp_path / "work"), tmp_path / "web.log") as web:
        assert httpx.get(f"{web}/healthz", timeout=5).json()["redis"] == "ok"
        labeled = make_event("issues.labeled", label="stepwise", sender="maria")
        os.kill(redis_process.pid, signal.SIGSTOP)

        def webhook(number: int) -> tuple[float, httpx.Response]:
            return timed(lambda: deliver(web, "issues.labeled", labeled, secret=SECRET,
                                         delivery_id=f"hung-{number}"))

        def health() -> tuple[float, httpx.Response]:
            return timed(lambda: httpx.get(f"{web}/healthz", timeout=30))

        with ThreadPoolExecutor(CONCURRENT + 2) as pool:
            webhooks = [pool.submit(webhook, n) for n in range(CONCURRENT)]
            time.sleep(0.3)  # /healthz asked while every webhook waits on the hung Redis
            checks = [pool.submit(health) for _ in range(2)]
            answers = [f.result() for f in webhooks]
            healths = [f.result() for f in checks]
        for seconds, response in answers:
            assert response.status_code == 503, response.text
            assert response.headers["Retry-After"] == "30"
            assert response.json()["error"] == "queue_unavailable"
            assert seconds < ANSWER_WITHIN_S, [round(s, 2) for s, _ in answers]
        for seconds, response in healths:
            assert response.status_code == 503
            assert response.json()["redis"] == "no answer"
            assert seconds < ANSWER_WITHIN_S, [round(s, 2) for s, _ in healths]

        os.kill(redis_process.pid, signal.SIGCONT)  # Redis is back: so is the web app
        deadline = time.monotonic() + 10
        while httpx.get(f"{web}/healthz", timeout=5).status_code != 200:
            assert time.monotonic() < deadline, "the web app did not see Redis come back"
            time.sleep(0.2)
        again = deliver(web, "issues.labeled", labeled, secret=SECRET, delivery_id="hung-after")
        assert again.status_code == 202, again.text
    logged = (tmp_path / "web.log").read_text()
    assert '"delivery": "hung-after"' in logged or '"delivery_id": "hung-after"' in logged
