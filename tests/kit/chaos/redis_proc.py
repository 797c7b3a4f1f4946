"""A redis-server that can be stopped and started again on the same port and directory
(its append-only file on), for the redis-restart scenario."""

from __future__ import annotations

import contextlib
import signal
import subprocess
import time
from pathlib import Path

import redis

from tests.kit.redis_server import free_port, redis_binary


class RedisServer:
    """redis-server with the append-only file on, restartable in place."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None
        self.url = f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        args = [redis_binary(), "--bind", "127.0.0.1", "--port", str(self.port), "--save", "",
                "--appendonly", "yes", "--appendfsync", "everysec", "--dir", str(self.data_dir),
                "--logfile", str(self.data_dir / "redis.log")]
        self.process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        client = redis.Redis.from_url(self.url, socket_timeout=1)
        deadline = time.monotonic() + 15
        try:
            while True:
                with contextlib.suppress(redis.RedisError):
                    if client.ping():
                        return
                if self.process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"redis-server did not start on port {self.port}")
                time.sleep(0.05)
        finally:
            client.close()

    def stop(self) -> None:
        """SIGTERM: redis-server writes out the append-only file and exits (no SHUTDOWN)."""
        if self.process is None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process = None
