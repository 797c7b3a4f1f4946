"""A real redis-server for the tests, started on a free loopback port and stopped afterwards."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def redis_binary() -> str:
    found = shutil.which("redis-server")
    if found:
        return found
    message = "redis-server is not installed (./scripts/test installs it with apt-get)"
    if os.environ.get("CI") == "true":
        raise RuntimeError(message)
    pytest.skip(message)


@contextmanager
def running_redis(*, appendonly: bool = False, data_dir: Path | None = None,
                  password: str | None = None) -> Iterator[str]:
    """Start redis-server; yield its URL. With `appendonly`, data survives a restart in data_dir;
    with `password`, clients must authenticate (the URL carries it)."""
    binary = redis_binary()
    port = free_port()
    workdir = data_dir or Path(tempfile.mkdtemp(prefix="stepwise-redis-"))
    args = [binary, "--bind", "127.0.0.1", "--port", str(port), "--save", "",
            "--appendonly", "yes" if appendonly else "no", "--dir", str(workdir)]
    if password is not None:
        args += ["--requirepass", password]
    hello = (f"AUTH {password}\r\n" if password is not None else "") + "PING\r\n"
    process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5) as sock:
                    sock.sendall(hello.encode())
                    if b"+PONG" in sock.recv(64):
                        break
            except OSError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"redis-server did not start on port {port}")
            time.sleep(0.05)
        credentials = f":{password}@" if password is not None else ""
        yield f"redis://{credentials}127.0.0.1:{port}/0"
    finally:
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if data_dir is None:
            shutil.rmtree(workdir, ignore_errors=True)
