"""Benchmark 1 (issue 6): webhook acknowledgement against the floor, in the same run.

    .venv/bin/python -m bench.webhook_ack [--seconds 10] [--rates 100,500]

Starts a real redis-server, `stepwise serve` (the real web app: bot.web.app.create_app under
uvicorn, in its own process, STEPWISE_* from the environment) and a bare FastAPI app whose one
POST route answers 202, served by the same uvicorn.run call in its own process. No worker runs,
so every delivery the app accepts stays in the queue and can be counted.

The load is open-loop: request i is due at start + i/rate, all due times fixed in advance, so a
slow server does not lower the offered rate; latency is measured from the due time to the end
of the response (a late send counts against the server, no coordinated omission). Each request
is a signed `issue_comment.created` delivery with its own X-GitHub-Delivery id and the body
`/stepwise status`, which passes the app's filters and is enqueued. Each (rate, target) run is
bounded: rate x seconds requests, a 10 s timeout each (GitHub's), the whole run cut after
seconds + 15 s. A short warm-up (not measured) precedes each target's first run.

Nothing lost: every delivery the app answered 202 "queued" must have its dedupe key
`stepwise:delivery:<id>` in Redis and its RQ job `event-<id>` in the queue, and the queue must
hold exactly that many jobs.

Prints per rate and target: sent, ok (202), errors, p50, p99, max (ms), and the p99 ratio
app/bare against the target (<= 1.3, no errors). Exit status 0: it is a measurement.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import re
import shutil
import statistics
import sys
import tempfile
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import redis

from bench._common import (
    STEPWISE,
    Served,
    cpu_seconds,
    free_port,
    machine_facts,
    percentile,
    server_process,
    stepwise_env,
)
from bot.server.worker import queue, rq_id
from tests.kit.github_auth import shared_app_key
from tests.kit.redis_server import running_redis
from tests.kit.webhooks import make_event, sign

SECRET = "bench-webhook-s3cret"
REPO = "octo-org/widgets"
TIMEOUT_S = 10.0  # github.com counts a delivery as failed after 10 s
TARGET_RATIO = 1.3
WARMUP = (200, 1.0)  # requests, seconds
CUT_S = 15.0  # a run ends at most this long after its last request was due
POOL_SIZE = 64  # keep-alive connections of the raw client
WEBHOOK_PATH = "/webhooks/github"
CONTENT_LENGTH = re.compile(rb"(?i)\r\ncontent-length:\s*(\d+)")


@dataclass
class Run:
    target: str
    rate: int
    sent: int = 0
    ok: int = 0
    errors: int = 0
    latencies_ms: list[float] = field(default_factory=list)  # of the ok answers
    error_kinds: dict[str, int] = field(default_factory=dict)
    accepted: list[str] = field(default_factory=list)  # delivery ids answered 202 "queued"
    lag_ms: float = 0.0  # the latest a request left after its due time (load generator health)
    elapsed_s: float = 0.0
    abandoned: int = 0  # still unanswered when the run was cut (the server may yet enqueue them)
    server_cpu_ms: float = 0.0  # server process CPU per request sent
    redis_cpu_ms: float = 0.0  # redis-server CPU per request sent

    def error(self, kind: str) -> None:
        self.errors += 1
        self.error_kinds[kind] = self.error_kinds.get(kind, 0) + 1

    @property
    def p50(self) -> float:
        return percentile(self.latencies_ms, 50)

    @property
    def p99(self) -> float:
        return percentile(self.latencies_ms, 99)


def delivery_body() -> bytes:
    payload = make_event("issue_comment.created", repo=REPO, issue_number=1,
                         comment_body="/stepwise status", comment_user="maria", sender="maria")
    return json.dumps(payload).encode()


def headers_for(delivery_id: str, signature: str) -> dict[str, str]:
    return {"X-GitHub-Event": "issue_comment", "X-GitHub-Delivery": delivery_id,
            "X-GitHub-Hook-ID": "109948940", "X-Hub-Signature-256": signature,
            "Content-Type": "application/json", "User-Agent": "GitHub-Hookshot/bench"}


class RawClient:
    """HTTP/1.1 over a bounded pool of keep-alive asyncio connections, requests pre-encoded.

    About 20x cheaper per request than httpx: on this 2-core machine httpx.AsyncClient costs
    ~1 ms of CPU per request and its pool slows down as connections pile up (closed loop: ~600
    requests/s at concurrency 1, ~340 at 16), so at 500/s the generator, not the server, set
    the latency. `--client httpx` keeps that generator for comparison.
    """

    def __init__(self, url: str, size: int = POOL_SIZE) -> None:
        parts = urlsplit(url)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        self.slots: asyncio.Queue[tuple[asyncio.StreamReader, asyncio.StreamWriter] | None] = \
            asyncio.Queue()
        for _ in range(size):
            self.slots.put_nowait(None)  # None: a slot with no connection opened yet

    def encode(self, headers: dict[str, str], body: bytes) -> bytes:
        lines = [f"POST {WEBHOOK_PATH} HTTP/1.1", f"Host: {self.host}:{self.port}",
                 *(f"{name}: {value}" for name, value in headers.items()),
                 f"Content-Length: {len(body)}", "", ""]
        return "\r\n".join(lines).encode() + body

    async def post(self, data: bytes) -> tuple[int, bytes]:
        conn = await self.slots.get()
        try:
            if conn is None:
                conn = await asyncio.open_connection(self.host, self.port)
            reader, writer = conn
            writer.write(data)
            head = await reader.readuntil(b"\r\n\r\n")
            status = int(head[9:12])
            found = CONTENT_LENGTH.search(head)
            payload = await reader.readexactly(int(found.group(1))) if found else b""
            if b"connection: close" in head.lower():
                writer.close()
                conn = None
            return status, payload
        except BaseException:
            if conn is not None:
                conn[1].close()
            conn = None
            raise
        finally:
            self.slots.put_nowait(conn)

    async def aclose(self) -> None:
        while not self.slots.empty():
            conn = self.slots.get_nowait()
            if conn is not None:
                conn[1].close()


class HttpxClient:
    def __init__(self, url: str, size: int = 1000) -> None:
        limits = httpx.Limits(max_connections=size, max_keepalive_connections=size)
        self.client = httpx.AsyncClient(base_url=url, limits=limits, timeout=TIMEOUT_S,
                                        trust_env=False)

    def encode(self, headers: dict[str, str], body: bytes) -> tuple[dict[str, str], bytes]:
        return headers, body

    async def post(self, data: tuple[dict[str, str], bytes]) -> tuple[int, bytes]:
        response = await self.client.post(WEBHOOK_PATH, headers=data[0], content=data[1])
        return response.status_code, response.content

    async def aclose(self) -> None:
        await self.client.aclose()


async def load(url: str, run: Run, *, count: int, seconds: float, body: bytes, signature: str,
               expect_queued: bool, client_kind: str) -> Run:
    """Send `count` requests evenly over `seconds` (open loop) and record the answers."""
    loop = asyncio.get_running_loop()
    client: RawClient | HttpxClient = (RawClient if client_kind == "raw" else HttpxClient)(url)
    ids = [f"bench-{uuid.uuid4()}" for _ in range(count)]
    prepared = [client.encode(headers_for(delivery, signature), body) for delivery in ids]
    interval = seconds / count

    async def send(delivery: str, data: object, due: float) -> None:
        try:
            status, payload = await client.post(data)  # type: ignore[arg-type]
        except (OSError, EOFError, ValueError, asyncio.IncompleteReadError,
                asyncio.LimitOverrunError, httpx.HTTPError) as exc:
            run.error(type(exc).__name__)
            return
        done = loop.time()
        if status != 202:
            run.error(f"HTTP {status}")
            return
        if expect_queued:
            outcome = json.loads(payload).get("status")
            if outcome != "queued":
                run.error(f"202 {outcome}")
                return
            run.accepted.append(delivery)
        if done - due > TIMEOUT_S:
            run.error(f"slower than {TIMEOUT_S:g} s")
            return
        run.ok += 1
        run.latencies_ms.append((done - due) * 1000)

    tasks: list[asyncio.Task[None]] = []
    start = loop.time() + 0.05
    try:
        for index, (delivery, data) in enumerate(zip(ids, prepared, strict=True)):
            due = start + index * interval
            delay = due - loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
            else:
                run.lag_ms = max(run.lag_ms, -delay * 1000)
            tasks.append(asyncio.create_task(send(delivery, data, due)))
            run.sent += 1
        _, pending = await asyncio.wait(tasks, timeout=max(0.1, start + seconds + CUT_S
                                                               - loop.time()))
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.wait(pending, timeout=5)
            run.abandoned = len(pending)
            run.errors += len(pending)
            run.error_kinds["unfinished"] = len(pending)
    finally:
        await client.aclose()
    run.elapsed_s = loop.time() - start
    return run


def redis_cpu_seconds(connection: redis.Redis) -> float:
    info = connection.info("cpu")
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


def measure(server: Served, target: str, rate: int, seconds: float, body: bytes,
            signature: str, *, client_kind: str, connection: redis.Redis,
            warm: bool = False) -> Run:
    count, span = WARMUP if warm else (max(1, int(rate * seconds)), seconds)
    run = Run(target, rate)
    gc.collect()
    gc.disable()  # the load generator's own pauses would show up as server latency
    before, redis_before = cpu_seconds(server.pid), redis_cpu_seconds(connection)
    try:
        asyncio.run(load(server.url, run, count=count, seconds=span, body=body,
                         signature=signature, expect_queued=target == "app",
                         client_kind=client_kind))
    finally:
        gc.enable()
    run.server_cpu_ms = (cpu_seconds(server.pid) - before) * 1000 / max(run.sent, 1)
    run.redis_cpu_ms = (redis_cpu_seconds(connection) - redis_before) * 1000 / max(run.sent, 1)
    return run


def check_nothing_lost(connection: redis.Redis, accepted: list[str], abandoned: int
                       ) -> tuple[bool, str]:
    """Every accepted delivery has its dedupe key and its queued job; the queue holds no more
    than those plus the requests the client gave up on (which the server may have enqueued)."""
    with connection.pipeline(transaction=False) as pipe:
        for delivery in accepted:
            pipe.exists(f"stepwise:delivery:{delivery}")
        present = pipe.execute()
    missing_keys = sum(1 for found in present if not found)
    q = queue(connection)
    queued_ids = set(q.get_job_ids())
    missing_jobs = sum(1 for delivery in accepted if rq_id("event", delivery) not in queued_ids)
    depth = q.count
    fine = (missing_keys == 0 and missing_jobs == 0
            and len(accepted) <= depth <= len(accepted) + abandoned)
    extra = f" (+ up to {abandoned} abandoned by the client)" if abandoned else ""
    return fine, (f"{len(accepted)} accepted{extra}; dedupe keys missing {missing_keys}; "
                  f"jobs missing {missing_jobs}; queue depth {depth}")


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.webhook_ack", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=10.0, help="per rate and target")
    parser.add_argument("--rates", default="100,500", help="requests per second, comma-separated")
    parser.add_argument("--repeat", type=int, default=1,
                        help="alternate bare/app runs this many times per rate; the ratio uses "
                        "the median p99 of each target (the machine is shared and noisy)")
    parser.add_argument("--app-workers", type=int, default=1,
                        help="`stepwise serve --workers N` (the bare app keeps one process)")
    parser.add_argument("--client", choices=("raw", "httpx"), default="raw",
                        help="load generator: raw asyncio HTTP/1.1 (default) or httpx")
    options = parser.parse_args()
    rates = [min(max(int(r), 1), 2000) for r in options.rates.split(",") if r.strip()]
    seconds = min(max(options.seconds, 1.0), 60.0)
    repeat = min(max(options.repeat, 1), 5)
    print(f"webhook acknowledgement: {machine_facts()}", flush=True)
    body = delivery_body()
    signature = sign(SECRET, body)
    work = Path(tempfile.mkdtemp(prefix="stepwise-bench-ack-"))
    try:
        run_all(work, rates, seconds, repeat, options.client, body, signature,
                app_workers=options.app_workers)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run_all(work: Path, rates: list[int], seconds: float, repeat: int, client_kind: str,
            body: bytes, signature: str, *, app_workers: int = 1) -> None:
    with running_redis() as redis_url:
        connection = redis.Redis.from_url(redis_url)
        app_port, bare_port = free_port(), free_port()
        env = stepwise_env(app_id=1, private_key=shared_app_key()[0], webhook_secret=SECRET,
                           redis_url=redis_url, github_api_url="http://127.0.0.1:9",
                           workdir=work / "work", host="127.0.0.1", port=app_port)
        app_cmd = [str(STEPWISE), "serve", "--workers", str(app_workers)]
        bare_cmd = [sys.executable, "-m", "bench._common", "bare", "--port", str(bare_port)]
        with server_process(app_cmd, env, app_port, work / "app.log") as app, \
                server_process(bare_cmd, env, bare_port, work / "bare.log") as bare:
            targets = {"bare": bare, "app": app}
            print(f"payload {len(body)} bytes; {seconds:g} s per run; client {client_kind}; "
                  "`stepwise serve` and the bare app, each uvicorn in its own process; "
                  "latency from each request's due time", flush=True)
            accepted: list[str] = []
            abandoned = 0
            for name, server in targets.items():
                warm = measure(server, name, WARMUP[0], WARMUP[1], body, signature,
                               client_kind=client_kind, connection=connection, warm=True)
                accepted += warm.accepted
                abandoned += warm.abandoned
            runs: list[Run] = []
            for rate in rates:
                for round_ in range(repeat):
                    order = list(targets.items())
                    for name, server in order if round_ % 2 == 0 else reversed(order):
                        run = measure(server, name, rate, seconds, body, signature,
                                      client_kind=client_kind, connection=connection)
                        accepted += run.accepted
                        abandoned += run.abandoned
                        runs.append(run)
            fine, detail = check_nothing_lost(connection, accepted, abandoned)
        report(runs, fine, detail)
        connection.close()


def report(runs: list[Run], fine: bool, detail: str) -> None:
    print()
    print(f"{'rate/s':>6} {'target':<6} {'sent':>6} {'ok':>6} {'errors':>6} {'p50 ms':>8} "
          f"{'p99 ms':>8} {'max ms':>8} {'cpu ms/req':>10} {'redis':>6} {'gen lag ms':>10}")
    for run in runs:
        worst = max(run.latencies_ms, default=float("nan"))
        print(f"{run.rate:>6} {run.target:<6} {run.sent:>6} {run.ok:>6} {run.errors:>6} "
              f"{run.p50:>8.2f} {run.p99:>8.2f} {worst:>8.1f} {run.server_cpu_ms:>10.2f} "
              f"{run.redis_cpu_ms:>6.2f} {run.lag_ms:>10.1f}")
        if run.error_kinds:
            print(f"{'':>14}errors: {run.error_kinds}")
    print()
    met_all = fine
    for rate in sorted({run.rate for run in runs}):
        app = [run for run in runs if run.rate == rate and run.target == "app"]
        bare = [run for run in runs if run.rate == rate and run.target == "bare"]
        app_p99 = statistics.median(run.p99 for run in app)
        bare_p99 = statistics.median(run.p99 for run in bare)
        app_p50 = statistics.median(run.p50 for run in app)
        bare_p50 = statistics.median(run.p50 for run in bare)
        errors = sum(run.errors for run in app + bare)
        ratio = app_p99 / bare_p99 if bare_p99 > 0 else float("inf")
        met = ratio <= TARGET_RATIO and errors == 0
        met_all = met_all and met
        print(f"{rate:>4}/s  p99 ratio app/bare = {ratio:.2f}  (p50 ratio "
              f"{app_p50 / bare_p50:.2f}; errors {errors}; target <= {TARGET_RATIO}, no "
              f"errors): {'met' if met else 'MISSED'}")
    print("cpu ms/req: the server process's CPU per request (uvicorn + route); redis: "
          "redis-server's; gen lag: the latest a request left after its due time")
    print(f"nothing lost: {'yes' if fine else 'NO'} ({detail})")
    print(f"target {'met' if met_all else 'missed'}")


if __name__ == "__main__":
    main()
