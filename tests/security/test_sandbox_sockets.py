"""What a sandboxed command can still reach: Unix sockets on disk (no network namespace covers
them), and with `network: true` everything on the host's loopback, Redis included."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from bot.server.context import ServerContext
from bot.settings import Settings
from jobs.adapters.sandbox import BubblewrapSandbox, SandboxPolicy
from tests.kit.github_auth import shared_app_key
from tests.kit.redis_server import redis_binary
from tests.security import hostile

pytestmark = [hostile.needs_bwrap, pytest.mark.integration]  # starts its own redis-server
PROBE = ("import socket, sys\n"
         "s = socket.socket(socket.AF_UNIX)\n"
         "try:\n"
         "    s.connect(sys.argv[1])\n"
         "    s.sendall(b'SET stepwise:pwned 1\\r\\n')\n"
         "    print('reached', s.recv(16))\n"
         "except OSError as exc:\n"
         "    print('refused', type(exc).__name__)\n")


@pytest.fixture
def unix_redis(outside_tmp: Path) -> Iterator[Path]:
    """A redis-server listening only on a Unix socket outside /tmp."""
    sock = outside_tmp / "redis" / "redis.sock"
    sock.parent.mkdir()
    proc = subprocess.Popen([redis_binary(), "--port", "0", "--unixsocket", str(sock),
                             "--unixsocketperm", "700", "--save", "", "--dir", str(sock.parent)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 10
    while not sock.exists():
        assert time.monotonic() < deadline and proc.poll() is None, "redis-server did not start"
        time.sleep(0.05)
    yield sock
    proc.terminate()
    proc.wait(timeout=10)
    shutil.rmtree(sock.parent, ignore_errors=True)


def test_a_redis_unix_socket_is_invisible_to_sandboxed_commands(
    unix_redis: Path, outside_tmp: Path,
) -> None:
    key = outside_tmp / "app.pem"
    key.write_text(shared_app_key()[0])  # a real PEM: a malformed key stops start-up
    settings = Settings(app_id=1, private_key_path=key, webhook_secret="s3cret-value",
                        redis_url=f"unix://{unix_redis}", workdir=outside_tmp / "work")
    ctx = ServerContext.from_settings(settings, sandbox=BubblewrapSandbox())
    worktree = outside_tmp / "work" / "repos" / "o" / "r.git" / "stepwise" / "worktrees" / "i-1"
    worktree.mkdir(parents=True)
    policy = SandboxPolicy(allow_commands=("python3",), hidden_paths=ctx.hidden_paths())
    result = ctx.sandbox.run(["python3", "-c", PROBE, str(unix_redis)], cwd=worktree,
                             policy=policy)
    assert result.output_tail.startswith("refused"), result.output_tail
    assert ctx.redis.get("stepwise:pwned") is None


def test_the_probe_reaches_the_socket_without_the_sandbox(unix_redis: Path) -> None:
    """The probe itself works: outside the sandbox it does reach Redis."""
    done = subprocess.run([sys.executable, "-c", PROBE, str(unix_redis)], capture_output=True,
                          text=True, timeout=30, check=True)
    assert done.stdout.startswith("reached")


def test_network_true_still_keeps_redis_on_loopback_out_of_reach(redis_url: str,
                                                                  outside_tmp: Path) -> None:
    """`network: true` is the egress proxy: Redis on the host's loopback stays out of reach,
    directly and through the proxy, even when the allowlist names it."""
    code = ("import socket, sys, urllib.request\n"
            "try:\n"
            "    socket.create_connection(('127.0.0.1', int(sys.argv[1])), 1).close()\n"
            "    print('reached')\n"
            "except OSError as exc:\n"
            "    print('refused', type(exc).__name__)\n"
            "for host in ('127.0.0.1', 'localhost'):\n"
            "    try:\n"
            "        urllib.request.urlopen(f'https://{host}:{sys.argv[1]}/', timeout=5)\n"
            "        print('reached', host)\n"
            "    except OSError as exc:\n"
            "        print('refused', host, exc)\n")
    port = str(urlsplit(redis_url).port)
    allow = (f"127.0.0.1:{port}", f"localhost:{port}")
    policy = SandboxPolicy(allow_commands=("python3",), network=True, network_allow=allow)
    result = BubblewrapSandbox().run(["python3", "-c", code, port], cwd=outside_tmp,
                                     policy=policy)
    lines = result.output_tail.splitlines()
    assert lines[0].startswith("refused"), result.output_tail
    assert all(line.startswith("refused") and "403" in line for line in lines[1:]), lines
    assert len(result.egress) == 2
    assert all(entry.startswith(("127.0.0.1", "localhost")) and " refused: " in entry
               and ("127.0.0.0/8" in entry or "::1" in entry) for entry in result.egress), \
        result.egress
