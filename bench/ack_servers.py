"""The processes under test in benchmarks 1 and 9: `stepwise serve` and the bare FastAPI app,
each under uvicorn in a process of its own (the same `uvicorn.run` call), and one measured
run of the load generator (bench/ack_load.py, a third process) against one of them.

`python -m bench._common bare --port N` serves the bare app. No worker runs, so every
delivery the app accepts stays in the queue and can be counted (`check_nothing_lost`).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path

import redis

from bench._common import STEPWISE, Served, cpu_seconds, free_port, server_process, stepwise_env
from bench.ack_load import SECRET, Run, run_load
from bot.plumbing.keys import delivery_key, event_task_id
from bot.plumbing.queue import queue
from tests.kit.github_auth import shared_app_key

WARMUP = (200, 1.0)  # requests, seconds


@contextlib.contextmanager
def targets(work: Path, redis_url: str, *, app_workers: int = 1) -> Iterator[dict[str, Served]]:
    """{"bare": ..., "app": ...}: both servers listening, stopped (by pid) afterwards. The app
    has a GitHub that never answers: the acknowledgement path never calls it."""
    app_port, bare_port = free_port(), free_port()
    env = stepwise_env(app_id=1, private_key=shared_app_key()[0], webhook_secret=SECRET,
                       redis_url=redis_url, github_api_url="http://127.0.0.1:9",
                       workdir=work / "serve", host="127.0.0.1", port=app_port)
    app_cmd = [str(STEPWISE), "serve", "--workers", str(app_workers)]
    bare_cmd = [sys.executable, "-m", "bench._common", "bare", "--port", str(bare_port)]
    with server_process(app_cmd, env, app_port, work / "app.log") as app, \
            server_process(bare_cmd, env, bare_port, work / "bare.log") as bare:
        yield {"bare": bare, "app": app}


def redis_cpu_seconds(connection: redis.Redis) -> float:
    info = connection.info("cpu")
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


def measure(server: Served, target: str, rate: int, seconds: float, *, client_kind: str,
            connection: redis.Redis, warm: bool = False) -> Run:
    """One open-loop run of the load generator against `server`, with the server's and
    redis-server's CPU per request over the run."""
    count, span = WARMUP if warm else (max(1, int(rate * seconds)), seconds)
    before, redis_before = cpu_seconds(server.pid), redis_cpu_seconds(connection)
    run = run_load(server.url, target, rate if not warm else count, count=count, seconds=span,
                   expect_queued=target == "app", client_kind=client_kind)
    run.server_cpu_ms = (cpu_seconds(server.pid) - before) * 1000 / max(run.sent, 1)
    run.redis_cpu_ms = (redis_cpu_seconds(connection) - redis_before) * 1000 / max(run.sent, 1)
    return run


def warm_up(servers: dict[str, Served], *, client_kind: str, connection: redis.Redis
            ) -> list[Run]:
    """A short unmeasured run against each server (its first requests import and connect)."""
    return [measure(server, name, WARMUP[0], WARMUP[1], client_kind=client_kind,
                    connection=connection, warm=True) for name, server in servers.items()]


def check_nothing_lost(connection: redis.Redis, accepted: list[str], abandoned: int
                       ) -> tuple[bool, str]:
    """Every accepted delivery has its dedupe key and its queued job; the queue holds no more
    than those plus the requests the client gave up on (which the server may have enqueued)."""
    with connection.pipeline(transaction=False) as pipe:
        for delivery in accepted:
            pipe.exists(delivery_key(delivery))
        present = pipe.execute()
    missing_keys = sum(1 for found in present if not found)
    q = queue(connection)
    queued_ids = set(q.get_job_ids())
    missing_jobs = sum(1 for delivery in accepted if event_task_id(delivery) not in queued_ids)
    depth = q.count
    fine = (missing_keys == 0 and missing_jobs == 0
            and len(accepted) <= depth <= len(accepted) + abandoned)
    extra = f" (+ up to {abandoned} abandoned by the client)" if abandoned else ""
    return fine, (f"{len(accepted)} accepted{extra}; dedupe keys missing {missing_keys}; "
                  f"jobs missing {missing_jobs}; queue depth {depth}")
