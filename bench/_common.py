"""Helpers shared by the benchmarks (processes, ports, CPU, percentiles).

Everything here runs on 127.0.0.1 and every process started here is stopped by its own pid
(each is the leader of a new session, so its children go with it).

`python -m bench._common bare --port N` serves the bare FastAPI app (one POST route answering
202) with exactly the uvicorn settings `stepwise serve` uses.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tests.kit.github import FakeGitHub

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

STEPWISE = Path(sys.executable).parent / "stepwise"
LOOPBACK = "127.0.0.1"
# GitHub's content-creation limit (80 writes a minute, 500 an hour an installation, which the
# fake enforces and the App's write budget keeps), raised to the most the App's settings accept
# by benchmarks that measure workers rather than GitHub's limits (lift_write_limits).
WRITES_PER_MINUTE, WRITES_PER_HOUR, WRITE_BURST = 10_000, 100_000, 1_000
NO_PROXY = {"NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"}


def machine_facts() -> str:
    return (f"{os.cpu_count()} cores (nproc {len(os.sched_getaffinity(0))}), "
            f"Python {platform.python_version()}, {platform.system()} {platform.release()}")


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100); NaN for no values."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = max(1, min(len(ordered), int(-(-q * len(ordered) // 100))))
    return ordered[rank - 1]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((LOOPBACK, 0))
        return int(sock.getsockname()[1])


def stepwise_env(**values: object) -> dict[str, str]:
    """os.environ plus STEPWISE_<NAME>=value for each keyword, and loopback kept off any proxy."""
    env = {**os.environ, **NO_PROXY}
    env.update({f"STEPWISE_{name.upper()}": str(value) for name, value in values.items()})
    return env


def lift_write_limits(gh: FakeGitHub) -> dict[str, int]:
    """Raise the fake GitHub's content-creation limit and return the App's settings that match.

    At GitHub's 80 writes a minute an installation sets the pace of a few concurrent jobs, not
    the workers: past a burst of 10 the App's write budget spaces writes 0.86 s apart, a step
    of about 5 writes took 4.3 s whatever the number of workers, and bench.scale_out's 8 jobs
    (about 200 writes) outlasted the phase's 150 s bound with 7 of 8 `running` (2026-12-08). A
    benchmark clearing Redis between phases also clears the App's budget while the fake still
    counts the writes: GitHub's 403s follow, the steps are re-queued for later with RQ's
    scheduler, and a `stepwise worker --burst` quits without them. The jobs finish under a
    steady worker. bench.api_writes measures the writes against GitHub's own limits."""
    gh.rate_limits.writes_per_minute = WRITES_PER_MINUTE
    gh.rate_limits.writes_per_hour = WRITES_PER_HOUR
    return {"github_writes_per_minute": WRITES_PER_MINUTE,
            "github_writes_per_hour": WRITES_PER_HOUR, "github_write_burst": WRITE_BURST}


def wait_for_port(port: int, process: subprocess.Popen[bytes], *, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        with contextlib.suppress(OSError), socket.create_connection((LOOPBACK, port), timeout=0.5):
            return
        if process.poll() is not None:
            raise RuntimeError(f"the server exited with {process.returncode} before listening")
        if time.monotonic() > deadline:
            raise RuntimeError(f"nothing listened on port {port} within {timeout} s")
        time.sleep(0.05)


def stop(process: subprocess.Popen[bytes], *, grace_s: float = 5.0) -> None:
    """SIGTERM the process's own session (started with start_new_session), SIGKILL after grace."""
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=grace_s)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)  # anything it left behind in its session
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=5)


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process (all its threads) so far, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Served:
    url: str
    pid: int


@contextlib.contextmanager
def server_process(args: list[str], env: dict[str, str], port: int, log: Path
                   ) -> Iterator[Served]:
    """A web server subprocess listening on `port`; yields its URL and pid, stops it after."""
    env = {**env, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))}
    with log.open("wb") as out:
        process = subprocess.Popen(args, env=env, stdout=out, stderr=subprocess.STDOUT,
                                   start_new_session=True, cwd=log.parent)
    try:
        wait_for_port(port, process)
        yield Served(f"http://{LOOPBACK}:{port}", process.pid)
    finally:
        stop(process)


# -- the bare app: the floor the webhook endpoint is compared with ---------------------------------

def bare_app() -> object:
    from fastapi import FastAPI
    from fastapi.responses import Response

    app = FastAPI(title="bare")

    @app.post("/webhooks/github")
    async def accept() -> Response:
        return Response(status_code=202)

    return app


def serve_bare(host: str, port: int) -> None:
    """The same uvicorn.run call `stepwise serve` makes (bot/cli/main.py), with the bare app."""
    import uvicorn

    from bot.observability.logs import setup_logging, uvicorn_log_config

    setup_logging()
    uvicorn.run(bare_app(), host=host, port=port, log_level="info",  # type: ignore[arg-type]
                log_config=uvicorn_log_config())


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench._common")
    sub = parser.add_subparsers(dest="command", required=True)
    bare = sub.add_parser("bare", help="serve the bare 202 app")
    bare.add_argument("--host", default=LOOPBACK)
    bare.add_argument("--port", type=int, required=True)
    options = parser.parse_args()
    if options.command == "bare":
        serve_bare(options.host, options.port)


if __name__ == "__main__":
    main()
