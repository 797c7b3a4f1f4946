"""The webhook load generator of benchmarks 1 and 9, run as a process of its own.

    .venv/bin/python -m bench.ack_load --url URL --count N --seconds S [--expect-queued]

It sends `count` signed `issue_comment.created` deliveries (each its own X-GitHub-Delivery
id and its own comment id, as GitHub's traffic has: the app refuses a body it has seen before
under another id as a replay; the comment `/stepwise status` passes the app's filters and is
enqueued) evenly over `seconds`, open loop: request i is due at start + i/rate, all due times
fixed in advance, so a slow server does not lower the offered rate; latency is measured from the
due time to the end of the response (a late send counts against the server: no coordinated
omission). Each request has GitHub's 10 s timeout and the run is cut CUT_S after its last
request was due.
It prints one JSON line: what was sent, answered and accepted, and every latency.

Its own process, so that the server under test and the generator do not share an interpreter
(a generator in the benchmark's process measured that process's contention too); the garbage
collector is off while it sends, so its own pauses never show up as server latency.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import re
import subprocess
import sys
import uuid
from dataclasses import asdict, dataclass, field
from urllib.parse import urlsplit

import httpx

from bench._common import ROOT, cpu_seconds, percentile
from tests.kit.webhooks import make_event, sign

SECRET = "bench-webhook-s3cret"
REPO = "octo-org/widgets"
TIMEOUT_S = 10.0  # github.com counts a delivery as failed after 10 s
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
    load_cpu_ms: float = 0.0  # the generator's own CPU per request sent

    def error(self, kind: str) -> None:
        self.errors += 1
        self.error_kinds[kind] = self.error_kinds.get(kind, 0) + 1

    @property
    def p50(self) -> float:
        return percentile(self.latencies_ms, 50)

    @property
    def p99(self) -> float:
        return percentile(self.latencies_ms, 99)


def delivery_bodies(count: int) -> list[bytes]:
    """`count` bodies of one comment event, each with a comment id of its own: distinct
    deliveries carry distinct bodies (a repeated body is refused as a replay, issue 40). The ids
    start at a random point, so runs against one Redis (warm-up, then each rate) never repeat."""
    payload = make_event("issue_comment.created", repo=REPO, issue_number=1,
                         comment_body="/stepwise status", comment_user="maria", sender="maria")
    first = 10**9 + uuid.uuid4().int % 10**12
    bodies = []
    for index in range(count):
        payload["comment"]["id"] = first + index
        bodies.append(json.dumps(payload).encode())
    return bodies


def headers_for(delivery_id: str, signature: str) -> dict[str, str]:
    return {"X-GitHub-Event": "issue_comment", "X-GitHub-Delivery": delivery_id,
            "X-GitHub-Hook-ID": "109948940", "X-Hub-Signature-256": signature,
            "Content-Type": "application/json", "User-Agent": "GitHub-Hookshot/bench"}


class RawClient:
    """HTTP/1.1 over a bounded pool of keep-alive asyncio connections, requests pre-encoded.

    About 20x cheaper per request than httpx: on this 2-core machine httpx.AsyncClient costs
    ~1 ms of CPU per request and its pool slows down as connections pile up, so at 500/s the
    generator, not the server, set the latency. `--client httpx` keeps it for comparison.
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


async def load(url: str, run: Run, *, count: int, seconds: float, expect_queued: bool,
               client_kind: str) -> Run:
    """Send `count` requests evenly over `seconds` (open loop) and record the answers."""
    loop = asyncio.get_running_loop()
    client: RawClient | HttpxClient = (RawClient if client_kind == "raw" else HttpxClient)(url)
    ids = [f"bench-{uuid.uuid4()}" for _ in range(count)]
    prepared = [client.encode(headers_for(delivery, sign(SECRET, body)), body)
                for delivery, body in zip(ids, delivery_bodies(count), strict=True)]
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


def run_load(url: str, target: str, rate: int, *, count: int, seconds: float,
             expect_queued: bool, client_kind: str = "raw") -> Run:
    """Run the generator in a child process and read its result."""
    argv = [sys.executable, "-m", "bench.ack_load", "--url", url, "--target", target,
            "--rate", str(rate), "--count", str(count), "--seconds", str(seconds),
            "--client", client_kind, *(["--expect-queued"] if expect_queued else [])]
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, check=False,
                          timeout=seconds + CUT_S + 60)
    if done.returncode != 0:
        raise RuntimeError(f"the load generator failed: {done.stderr.decode()[-2000:]}")
    return Run(**json.loads(done.stdout.decode().strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.ack_load", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", required=True)
    parser.add_argument("--target", default="app")
    parser.add_argument("--rate", type=int, default=100)
    parser.add_argument("--count", type=int, required=True)
    parser.add_argument("--seconds", type=float, required=True)
    parser.add_argument("--client", choices=("raw", "httpx"), default="raw")
    parser.add_argument("--expect-queued", action="store_true",
                        help="count a 202 as ok only when its status is `queued`")
    options = parser.parse_args()
    run = Run(options.target, options.rate)
    gc.collect()
    gc.disable()
    before = cpu_seconds(os.getpid())
    asyncio.run(load(options.url, run, count=max(options.count, 1), seconds=options.seconds,
                     expect_queued=options.expect_queued, client_kind=options.client))
    run.load_cpu_ms = (cpu_seconds(os.getpid()) - before) * 1000 / max(run.sent, 1)
    print(json.dumps(asdict(run)), flush=True)


if __name__ == "__main__":
    main()
