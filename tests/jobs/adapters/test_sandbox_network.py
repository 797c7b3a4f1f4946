"""The network a sandboxed command gets, in real bubblewrap: the egress proxy and nothing else.

With `network` the package registry answers through Stepwise's egress proxy; the host's
loopback services, cloud metadata, private ranges and hosts off the allowlist never do. Without
it there is no proxy and no route at all. (Only loopback and the registry are ever contacted:
the refused addresses are refused by the proxy or by the missing route, before any packet.)
"""

from __future__ import annotations

import json
import os
import socket
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from jobs.adapters.sandbox import BubblewrapSandbox, SandboxPolicy, bubblewrap_available

pytestmark = pytest.mark.skipif(not bubblewrap_available(), reason="needs bubblewrap")


@pytest.fixture(autouse=True)
def _python_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", f"{os.path.dirname(sys.executable)}{os.pathsep}{os.environ['PATH']}")

PROBE = r"""
import json, socket, sys, urllib.request
results = {}
def fetch(name, url):
    try:
        with urllib.request.urlopen(url, timeout=30) as answer:
            results[name] = f"ok {answer.status}"
    except Exception as exc:
        results[name] = f"refused {exc}"
def direct(name, host, port):
    try:
        socket.create_connection((host, port), 2).close()
        results[name] = "ok"
    except OSError as exc:
        results[name] = f"refused {exc}"
fetch("registry", "https://pypi.org/simple/six/")
fetch("off_allowlist", "https://example.com/")
fetch("metadata_via_proxy", "https://169.254.169.254/")
fetch("private_via_proxy", "https://10.0.0.1/")
fetch("loopback_via_proxy", f"https://127.0.0.1:{sys.argv[1]}/")
direct("loopback", "127.0.0.1", int(sys.argv[1]))
direct("metadata", "169.254.169.254", 80)
direct("private", "10.0.0.1", 443)
json.dump(results, open("probe.json", "w"))
"""


@pytest.fixture
def loopback_service() -> Iterator[int]:
    """A listener on the host's loopback that records whether anyone connected."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    reached: list[bool] = []

    def accept() -> None:
        try:
            server.accept()
            reached.append(True)
        except OSError:
            pass

    threading.Thread(target=accept, daemon=True).start()
    yield int(server.getsockname()[1])
    server.close()
    assert not reached, "a sandboxed command reached the host's loopback"


def probe(tmp_path: Path, port: int, *, network: bool) -> dict[str, str]:
    allow = ("pypi.org", "169.254.169.254", "10.0.0.1", f"127.0.0.1:{port}")
    policy = SandboxPolicy(allow_commands=("python3",), network=network, network_allow=allow,
                           timeout=120)
    result = BubblewrapSandbox().run(["python3", "-c", PROBE, str(port)], cwd=tmp_path,
                                     policy=policy)
    assert result.exit_code == 0, result.output_tail
    found: dict[str, str] = json.loads((tmp_path / "probe.json").read_text())
    found["egress"] = "\n".join(result.egress)
    return found


def test_with_network_only_the_allowlisted_registry_answers(tmp_path: Path,
                                                            loopback_service: int) -> None:
    found = probe(tmp_path, loopback_service, network=True)
    assert found["registry"] == "ok 200"
    for name in ("off_allowlist", "metadata_via_proxy", "private_via_proxy",
                 "loopback_via_proxy"):
        assert found[name].startswith("refused") and "403" in found[name], (name, found[name])
    for name in ("loopback", "metadata", "private"):
        assert found[name].startswith("refused"), (name, found[name])
    egress = found["egress"]
    assert "pypi.org:443 allowed" in egress
    assert "example.com:443 refused: example.com:443 is not on network_allow" in egress
    assert "169.254.0.0/16" in egress and "10.0.0.0/8" in egress and "127.0.0.0/8" in egress


def test_without_network_there_is_no_proxy_and_no_route(tmp_path: Path,
                                                        loopback_service: int) -> None:
    found = probe(tmp_path, loopback_service, network=False)
    assert all(value.startswith("refused") for key, value in found.items() if key != "egress")
    assert found["egress"] == ""
