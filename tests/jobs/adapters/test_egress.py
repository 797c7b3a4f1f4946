"""The egress proxy: which addresses and hosts it refuses, and tunnels through it over real sockets."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import pytest

from jobs.adapters.egress import Allowlist, EgressProxy, denied_address


@pytest.mark.parametrize("address", [
    "127.0.0.1", "127.8.9.10", "10.1.2.3", "172.16.0.1", "172.31.255.254", "192.168.1.1",
    "169.254.169.254", "100.64.0.1", "0.0.0.0", "224.0.0.251", "255.255.255.255",
    "::1", "::", "fe80::1", "fc00::1", "fd12:3456::1", "::ffff:127.0.0.1",
    "::ffff:169.254.169.254", "64:ff9b::a9fe:a9fe", "2002:7f00:1::1",
])
def test_never_reached(address: str) -> None:
    assert denied_address(address) is not None


@pytest.mark.parametrize("address", ["8.8.8.8", "151.101.0.223", "203.0.113.80",
                                     "2606:4700::1111", "172.32.0.1", "192.169.0.1"])
def test_public_addresses_pass(address: str) -> None:
    assert denied_address(address) is None


def test_allowlist_matches_hosts_subdomains_and_ports() -> None:
    allow = Allowlist(("pypi.org", "*.pythonhosted.org", "registry.example.com:8443"))
    assert allow.admits("PyPI.org.", 443)
    assert not allow.admits("pypi.org", 80)
    assert not allow.admits("evilpypi.org", 443)
    assert allow.admits("files.pythonhosted.org", 443)
    assert not allow.admits("pythonhosted.org", 443)
    assert not allow.admits("pythonhosted.org.evil.com", 443)
    assert allow.admits("registry.example.com", 8443)
    assert not allow.admits("registry.example.com", 443)


@pytest.fixture
def listener() -> Iterator[int]:
    """A loopback service (like Redis) that must never be reached through the proxy."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    accepted: list[socket.socket] = []

    def accept() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            accepted.append(conn)

    threading.Thread(target=accept, daemon=True).start()
    yield int(server.getsockname()[1])
    server.close()
    assert accepted == [], "the loopback service was reached"


def connect(proxy: EgressProxy, target: str) -> bytes:
    with socket.socket(socket.AF_UNIX) as sock:
        sock.settimeout(10)
        sock.connect(str(proxy.socket_path))
        sock.sendall(f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode())
        return sock.recv(4096)


def test_refuses_what_the_allowlist_or_the_address_rules_forbid(listener: int) -> None:
    allow = [f"localhost:{listener}", f"127.0.0.1:{listener}", "169.254.169.254:80",
             "10.0.0.1", "pypi.org"]
    with EgressProxy(allow) as proxy:
        for target in (f"localhost:{listener}", f"127.0.0.1:{listener}", "169.254.169.254:80",
                       "10.0.0.1:443", "[::1]:443", "example.org:443", "pypi.org:22"):
            answer = connect(proxy, target)
            assert answer.startswith(b"HTTP/1.1 403"), (target, answer)
        with socket.socket(socket.AF_UNIX) as sock:
            sock.connect(str(proxy.socket_path))
            sock.sendall(b"GET http://pypi.org/ HTTP/1.1\r\nHost: pypi.org\r\n\r\n")
            assert sock.recv(4096).startswith(b"HTTP/1.1 405")
    assert [r.allowed for r in proxy.records] == [False] * 8
    reasons = {r.host: r.reason for r in proxy.records}
    assert "not on network_allow" in reasons["example.org"]
    assert "169.254.0.0/16" in reasons["169.254.169.254"]
    assert "10.0.0.0/8" in reasons["10.0.0.1"]
    assert "127.0.0.0/8" in reasons["localhost"] or "::1" in reasons["localhost"]


def test_stepwise_own_services_are_refused_even_when_public() -> None:
    with EgressProxy(["pypi.org"], deny_hosts=["pypi.org"]) as proxy:
        assert connect(proxy, "pypi.org:443").startswith(b"HTTP/1.1 403")
    assert "Stepwise's own services" in proxy.records[0].reason


def test_garbage_is_dropped_and_the_proxy_keeps_serving() -> None:
    with EgressProxy(["example.org"]) as proxy:
        with socket.socket(socket.AF_UNIX) as sock:
            sock.connect(str(proxy.socket_path))
            sock.sendall(b"\x16\x03\x01 not http at all\r\n\r\n")
            assert sock.recv(4096) == b""
        assert connect(proxy, "example.com:443").startswith(b"HTTP/1.1 403")
    assert not proxy.socket_path.exists()
