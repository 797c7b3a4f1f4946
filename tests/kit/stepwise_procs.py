"""Real `stepwise serve` and `stepwise worker` processes for operations tests: started with an
environment of STEPWISE_* settings, their output in a log file, stopped by their process id."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import httpx

from tests.kit.github import FakeGitHub
from tests.kit.github_rate_limits import WORLD_WRITE_BURST
from tests.kit.loopback import TLS
from tests.kit.redis_server import free_port

STEPWISE = Path(sys.executable).parent / "stepwise"
SECRET = "ops-webhook-s3cret"


def base_env(redis_url: str, workdir: Path, **settings: str) -> dict[str, str]:
    """The environment of a web app and workers on `redis_url` (JSON logs; loopback unproxied;
    a test world's write burst, tests/kit/github_rate_limits.py)."""
    return {**os.environ, "STEPWISE_REDIS_URL": redis_url, "STEPWISE_WEBHOOK_SECRET": SECRET,
            "STEPWISE_WORKDIR": str(workdir), "STEPWISE_LOG_FORMAT": "json",
            "STEPWISE_GITHUB_WRITE_BURST": str(WORLD_WRITE_BURST),
            "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost", **settings}


def app_env(redis_url: str, workdir: Path, gh: FakeGitHub, **settings: str) -> dict[str, str]:
    """`base_env` for the App installed on the fake GitHub `gh` (its id, key and API URL)."""
    return base_env(redis_url, workdir, STEPWISE_APP_ID=str(gh.app_id),
                    STEPWISE_PRIVATE_KEY=gh.private_key_pem, STEPWISE_GITHUB_API_URL=gh.base_url,
                    **settings)


def wait_answering(url: str, process: subprocess.Popen[bytes], log: Path, what: str, *,
                   ok: Callable[[httpx.Response], bool] = lambda _: True,
                   timeout: float = 60) -> None:
    """Until `url`/healthz answers (and `ok` holds of the answer); a process that exits or a
    timeout fails naming `what`, with the tail of its log."""
    deadline = time.monotonic() + timeout
    while True:
        with contextlib.suppress(httpx.HTTPError):
            if ok(httpx.get(f"{url}/healthz", timeout=2, verify=TLS)):
                return
        if process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"{what} did not start:\n{log.read_text()[-3000:]}")
        time.sleep(0.1)


def stop(process: subprocess.Popen[bytes], *, timeout: float = 15) -> None:
    """SIGTERM, then SIGKILL if it does not exit in time (a SIGSTOPped peer may hold it)."""
    if process.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@contextlib.contextmanager
def stepwise_serve(env: dict[str, str], log: Path, *, args: Sequence[str] = (),
                   command: Sequence[str] | None = None, port: int | None = None,
                   cwd: Path | None = None) -> Iterator[str]:
    """`stepwise serve` on `port` (a free one by default); yields its base URL once /healthz
    answers at all."""
    port = port or free_port()
    argv = [*(command or [str(STEPWISE)]), "serve", "--host", "127.0.0.1", "--port", str(port),
            *args]
    with log.open("wb") as out:
        process = subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.STDOUT, cwd=cwd)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_answering(url, process, log, "stepwise serve")
        yield url
    finally:
        stop(process)


def stepwise_worker(env: dict[str, str], log: Path, *, args: Sequence[str] = (),
                    command: Sequence[str] | None = None,
                    cwd: Path | None = None) -> subprocess.Popen[bytes]:
    """A `stepwise worker` process (the caller stops it with `stop`)."""
    with log.open("ab") as out:
        return subprocess.Popen([*(command or [str(STEPWISE)]), "worker", *args], env=env,
                                stdout=out, stderr=subprocess.STDOUT, cwd=cwd,
                                start_new_session=True)
