"""Stand-ins for package registries and for the operator's package-index settings (tests only).

There is no internet in tests: `route_registries` makes the sandbox's egress proxy (the real
one, jobs/adapters/egress.py, subclassed here) send a tunnel to a registry name the test maps
onto a loopback echo server, only after the proxy's own allowlist admitted that name: every
other name, and every address, still goes through the real rules. The mapping lives in the
test's process only; nothing a repository holds can reach it. `isolate_operator` points the
operator's settings (index variables, pip/uv/npm config files) at an empty directory, so a test
sees only the settings it writes.
"""

from __future__ import annotations

import contextlib
import datetime
import socket
import ssl
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from jobs.adapters import egress_defaults, sandbox
from jobs.adapters.egress import EgressProxy, normalise_host

OPERATOR_VARIABLES = (*egress_defaults.INDEX_VARIABLES, "PIP_CONFIG_FILE", "UV_CONFIG_FILE",
                      "NPM_CONFIG_USERCONFIG", "XDG_CONFIG_HOME", "XDG_CONFIG_DIRS")


def isolate_operator(monkeypatch: pytest.MonkeyPatch, root: Path) -> Path:
    """No operator index settings but those the test writes under `root` (`root/etc/pip.conf`,
    `root/home/.npmrc`, ...); returns the operator's home."""
    home = root / "home"
    home.mkdir(parents=True, exist_ok=True)
    for name in OPERATOR_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(egress_defaults, "SYSTEM_ROOT", root)
    monkeypatch.setenv("HOME", str(home))
    return home


class EchoServer:
    """A TCP server on the host's loopback standing in for a registry: it answers each
    connection with `registry <name>: ` and echoes what it is sent."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = int(self.sock.getsockname()[1])
        self.accepted = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn, contextlib.suppress(OSError):
            conn.sendall(f"registry {self.name}: ".encode() + conn.recv(1024))

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()


def routed_proxy(upstreams: Mapping[str, int]) -> type[EgressProxy]:
    """The real egress proxy, but a name in `upstreams` that its allowlist admits is connected
    to that loopback port instead of being resolved."""

    class LoopbackRegistries(EgressProxy):
        async def _check(self, host: str, port: int) -> tuple[tuple[str, int] | None, str]:
            name = normalise_host(host)
            if name in upstreams and self.allowlist.admits(host, port):
                return ("127.0.0.1", upstreams[name]), ""
            return await super()._check(host, port)

    return LoopbackRegistries


@contextlib.contextmanager
def route_registries(monkeypatch: pytest.MonkeyPatch, *names: str,
                     servers: Mapping[str, EchoServer] | None = None,
                     ) -> Iterator[dict[str, EchoServer]]:
    """An echo server per registry name (or the `servers` given), and the sandbox's proxy
    routing those names to them."""
    servers = {**{name: EchoServer(name) for name in names}, **(servers or {})}
    monkeypatch.setattr(sandbox, "EgressProxy",
                        routed_proxy({name: s.port for name, s in servers.items()}))
    try:
        yield servers
    finally:
        for server in servers.values():
            server.close()


PROBE = r'''"""Connects to each https://HOST given through HTTPS_PROXY (CONNECT), prints the answer."""
import os, socket, sys
from urllib.parse import urlsplit
proxy = urlsplit(os.environ["HTTPS_PROXY"])
failed = False
print("PIP_INDEX_URL", os.environ.get("PIP_INDEX_URL", "-"))
for url in sys.argv[1:]:
    host = urlsplit(url).hostname
    with socket.create_connection((proxy.hostname, proxy.port), 10) as sock:
        sock.settimeout(3)
        sock.sendall(f"CONNECT {host}:443 HTTP/1.1\r\nHost: {host}:443\r\n\r\n".encode())
        head = sock.recv(4096).decode("latin-1")
        if not head.startswith("HTTP/1.1 200"):
            print("refused", host, " / ".join(head.splitlines()))
            failed = True
            continue
        sock.sendall(b"ping")
        try:
            print("reached", host, sock.recv(1024).decode())
        except OSError as exc:  # a real registry speaks TLS first: no echo
            print("reached", host, "no echo:", exc)
sys.exit(1 if failed else 0)
'''


class SelfSignedServer(EchoServer):
    """A registry stand-in behind a TLS-inspecting proxy: it answers TLS with a certificate
    for `name` that no trust store holds."""

    def __init__(self, name: str, directory: Path) -> None:
        super().__init__(name)
        cert, key = self_signed(name, directory)
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.context.load_cert_chain(cert, key)

    def _serve(self, conn: socket.socket) -> None:
        with contextlib.suppress(OSError), self.context.wrap_socket(conn, server_side=True) as tls:
            tls.sendall(tls.recv(1024))


def self_signed(name: str, directory: Path) -> tuple[Path, Path]:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Inspecting Proxy CA")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
            .sign(key, hashes.SHA256()))
    directory.mkdir(parents=True, exist_ok=True)
    cert_path, key_path = directory / f"{name}.pem", directory / f"{name}.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_path, key_path


FETCH = r'''"""Fetches each URL given through HTTPS_PROXY with urllib, as pip's and npm's HTTP does."""
import sys, urllib.request
for url in sys.argv[1:]:
    with urllib.request.urlopen(url, timeout=10) as answer:
        print("fetched", url, answer.status)
'''
