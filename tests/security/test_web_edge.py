"""The web edge under a flood: a 300 MB POST costs the real uvicorn process no more than the cap.

The web app runs as its own process (uvicorn with the app factory, as `stepwise serve` does);
its peak resident memory (VmHWM in /proc/<pid>/status) is read before and after each attack.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from bot.web.webhook_body import MAX_PAYLOAD_BYTES
from tests.kit.redis_server import free_port

FLOOD_BYTES = 300 * 1024 * 1024
CHUNK = b"x" * (1024 * 1024)
SLACK_BYTES = 6 * 1024 * 1024  # what "within a few MB" allows on top of what is measured against
ROOT = Path(__file__).resolve().parents[2]


@dataclass
class WebProcess:
    pid: int
    port: int

    def peak_kib(self) -> int:
        return _status_kib(self.pid, "VmHWM")


def _status_kib(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    raise AssertionError(f"no {field} in /proc/{pid}/status")


@pytest.fixture
def web(tmp_path: Path, redis_url: str) -> Iterator[WebProcess]:
    port = free_port()
    env = {**os.environ, "STEPWISE_APP_ID": "1", "STEPWISE_PRIVATE_KEY": "unused",
           "STEPWISE_WEBHOOK_SECRET": "s3cret", "STEPWISE_REDIS_URL": redis_url,
           "STEPWISE_WORKDIR": str(tmp_path / "work")}
    process = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "--factory", "bot.web.app:create_app", "--host", "127.0.0.1",
         "--port", str(port), "--log-level", "info", "--no-access-log"],
        cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True)
    assert process.stderr is not None
    for line in process.stderr:  # wait for the event, not for a time: the socket is bound once
        if "Uvicorn running on" in line:  # uvicorn says this (after "startup complete")
            break
    else:
        raise AssertionError(f"uvicorn did not start (exit {process.wait()})")
    threading.Thread(target=process.stderr.read, daemon=True).start()  # keep the pipe drained
    try:
        yield WebProcess(process.pid, port)
    finally:
        process.terminate()
        process.wait(timeout=10)


def flood(port: int, *, headers: dict[str, str], chunked: bool) -> int:
    """POST FLOOD_BYTES (declared, or chunked) and return the status line's code; the sender stops
    as soon as the answer arrives or the server hangs up."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=60)
    framing = {"Transfer-Encoding": "chunked"} if chunked else {"Content-Length": str(FLOOD_BYTES)}
    head = {"Host": "127.0.0.1", "X-GitHub-Event": "issues", "X-GitHub-Delivery": "flood",
            "Content-Type": "application/json", **framing, **headers}
    request = "POST /webhooks/github HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in head.items())
    answered = threading.Event()

    def send() -> None:
        try:
            sock.sendall((request + "\r\n").encode())
            frame = (b"%x\r\n" % len(CHUNK)) + CHUNK + b"\r\n" if chunked else CHUNK
            for _ in range(FLOOD_BYTES // len(CHUNK)):
                if answered.is_set():
                    return
                sock.sendall(frame)
            if chunked:
                sock.sendall(b"0\r\n\r\n")
        except OSError:
            return  # the server hung up after answering

    sender = threading.Thread(target=send, daemon=True)
    sender.start()
    try:
        status_line = sock.makefile("rb").readline()
    finally:
        answered.set()
        sender.join(timeout=60)
        sock.close()
    assert status_line.startswith(b"HTTP/1.1 "), status_line
    return int(status_line.split()[1])


def test_a_300_mb_post_costs_the_web_process_at_most_the_cap(web: WebProcess) -> None:
    forged = {"X-Hub-Signature-256": "sha256=" + "0" * 64}
    start = web.peak_kib()

    # Unsigned, declared and chunked: refused without reading a byte of the body.
    assert flood(web.port, headers={}, chunked=False) == 413
    assert flood(web.port, headers={}, chunked=True) == 401
    assert flood(web.port, headers=forged, chunked=False) == 413  # refused by its declared length
    unsigned_growth = (web.peak_kib() - start) * 1024
    assert unsigned_growth < SLACK_BYTES, f"unsigned floods grew the peak by {unsigned_growth} bytes"

    # Signed (but forged) and chunked: read with the cap, refused once it passes the cap.
    assert flood(web.port, headers=forged, chunked=True) == 413
    growth = (web.peak_kib() - start) * 1024
    print(f"web process peak RSS: start {start} KiB, unsigned floods +{unsigned_growth // 1024} KiB, "
          f"after the forged chunked flood +{growth // 1024} KiB (cap {MAX_PAYLOAD_BYTES // 1024} KiB)")
    assert growth < MAX_PAYLOAD_BYTES + SLACK_BYTES, f"the peak grew by {growth} bytes"


@pytest.mark.parametrize("chunked", [False, True])
def test_the_cap_is_exact_for_declared_and_chunked_bodies(redis_url: str, chunked: bool) -> None:
    import json

    import httpx
    import redis

    from bot.settings import Settings
    from bot.web.app import create_app
    from tests.bot.conftest import served
    from tests.kit.webhooks import sign

    app = create_app(Settings(app_id=1, private_key="unused", webhook_secret="s3cret",
                              redis_url=redis_url), redis.Redis.from_url(redis_url))
    app.state.max_payload_bytes = 4096
    ping = json.dumps({"zen": "Keep it logically awesome.", "hook_id": 1})
    at_cap = (ping + " " * (4096 - len(ping))).encode()
    for body, status in [(at_cap, 202), (at_cap + b" ", 413)]:
        headers = {"X-GitHub-Event": "ping", "X-GitHub-Delivery": f"cap-{len(body)}-{chunked}",
                   "X-Hub-Signature-256": sign("s3cret", body), "Content-Type": "application/json"}
        content: object = iter([body[:1000], body[1000:]]) if chunked else body
        with served(app) as url, httpx.Client(base_url=url, trust_env=False) as client:
            response = client.post("/webhooks/github", content=content, headers=headers)
        assert response.status_code == status, (len(body), response.text)


def _post_declared(port: int, size: int, number: int, statuses: list[int]) -> None:
    """POST `size` bytes with a forged sha256 signature, reading the answer."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=120)
    head = {"Host": "127.0.0.1", "X-GitHub-Event": "issues", "X-GitHub-Delivery": f"c{number}",
            "Content-Type": "application/json", "Content-Length": str(size),
            "X-Hub-Signature-256": "sha256=" + "0" * 64}
    request = "POST /webhooks/github HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in head.items())
    answered = threading.Event()

    def send() -> None:
        try:
            sock.sendall((request + "\r\n").encode())
            for _ in range(size // len(CHUNK)):
                if answered.is_set():
                    return
                sock.sendall(CHUNK)
        except OSError:
            return

    sender = threading.Thread(target=send, daemon=True)
    sender.start()
    try:
        statuses.append(int(sock.makefile("rb").readline().split()[1]))
    finally:
        answered.set()
        sender.join(timeout=60)
        sock.close()


def test_concurrent_large_forged_bodies_are_capped_in_total(web: WebProcess) -> None:
    from bot.web.webhook_body import MAX_BUFFERED_BYTES

    start = web.peak_kib()
    statuses: list[int] = []
    senders = [threading.Thread(target=_post_declared,
                                args=(web.port, 20 * 1024 * 1024, number, statuses))
               for number in range(16)]  # 320 MB in all, each under the 25 MB payload cap
    for sender in senders:
        sender.start()
    for sender in senders:
        sender.join(timeout=120)
    growth = (web.peak_kib() - start) * 1024
    assert len(statuses) == 16 and set(statuses) <= {401, 503}, statuses
    assert 503 in statuses
    assert growth < MAX_BUFFERED_BYTES + SLACK_BYTES, f"the peak grew by {growth} bytes"
