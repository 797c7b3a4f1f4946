"""Stepwise's egress proxy: the only way out of a sandbox that may use the network.

Sandboxed commands run in a network namespace of their own (bubblewrap's `--unshare-net`): a
loopback and nothing else, so no route reaches the host, its loopback, Redis, the web app, cloud
metadata or a private range. When the policy allows the network, this proxy listens on a Unix
socket that is bound into the sandbox, where `egress_forward.py` serves it on the namespace's own
loopback as `HTTPS_PROXY`. It speaks HTTP `CONNECT` only (every registry is HTTPS) and admits a
tunnel when the host is on the allowlist and every address the host resolves to is public; it then
connects to the address it checked (no second look-up, so DNS rebinding gains nothing).
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import socket
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from jobs.decisions.network_failure import no_resolution, not_allowed, unreachable
from jobs.inputs import caps

log = logging.getLogger(__name__)

HEAD_LIMIT = 16 * 1024
HEAD_TIMEOUT_S = 30.0
CONNECT_TIMEOUT_S = 15.0
DEFAULT_PORT = 443

# Never reachable through the proxy, whatever the allowlist says: "this network", RFC 1918,
# shared address space, loopback, link-local (169.254.169.254 is cloud metadata), IETF protocol
# assignments, benchmarking, multicast, reserved, broadcast; their IPv6 counterparts.
DENIED_NETWORKS = tuple(ipaddress.ip_network(net) for net in (
    "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16",
    "172.16.0.0/12", "192.0.0.0/24", "192.168.0.0/16", "198.18.0.0/15", "224.0.0.0/4",
    "240.0.0.0/4", "::/128", "::1/128", "fc00::/7", "fe80::/10", "fec0::/10", "ff00::/8",
    "64:ff9b:1::/48", "2001::/32", "100::/64", "2001:db8::/32",
))

@dataclass(frozen=True)
class EgressRecord:
    """One tunnel asked of the proxy: where to, whether it was opened, and why not."""

    host: str
    port: int
    allowed: bool
    reason: str = ""
    address: str = ""


# IPv6 forms that carry an IPv4 address in their last 32 bits: IPv4-compatible (::/96),
# IPv4-translated (::ffff:0:0:0/96), NAT64 (64:ff9b::/96). IPv4-mapped, 6to4 and Teredo are
# decoded by `ipaddress`; the local-use NAT64 prefix and Teredo as a whole are denied outright.
EMBEDDING_NETWORKS = tuple(ipaddress.ip_network(net) for net in (
    "::/96", "::ffff:0:0:0/96", "64:ff9b::/96"))


def embedded_ipv4(ip: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """Every IPv4 address an IPv6 address embeds (mapped, compatible, translated, NAT64,
    6to4, Teredo server and client)."""
    found = [embedded for embedded in (ip.ipv4_mapped, ip.sixtofour) if embedded is not None]
    if ip.teredo is not None:
        found += list(ip.teredo)
    if any(ip in network for network in EMBEDDING_NETWORKS):
        found.append(ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF))
    return found


def denied_address(address: str) -> str | None:
    """Why an address may never be reached (None if it is public)."""
    ip = ipaddress.ip_address(address)
    if isinstance(ip, ipaddress.IPv6Address):
        for embedded in embedded_ipv4(ip):
            reason = denied_address(str(embedded))
            if reason is not None:
                return f"{address} embeds {reason}"
    for network in DENIED_NETWORKS:
        if ip.version == network.version and ip in network:
            return f"{address} is in {network}, which sandboxed commands never reach"
    return None


def normalise_host(host: str) -> str:
    return host.strip().rstrip(".").lower()


@dataclass(frozen=True)
class Allowlist:
    """Hosts a tunnel may go to: `pypi.org` (that host, port 443), `*.example.org` (its
    subdomains), `host:8443` (another port)."""

    entries: tuple[str, ...]

    def admits(self, host: str, port: int) -> bool:
        host = normalise_host(host)
        for entry in self.entries:
            name, _, entry_port = normalise_host(entry).partition(":")
            wanted_port = int(entry_port) if entry_port.isdigit() else DEFAULT_PORT
            if port != wanted_port:
                continue
            if name.startswith("*."):
                if host.endswith(name[1:]) and host != name[2:]:
                    return True
            elif host == name:
                return True
        return False


class EgressProxy:
    """The proxy for one sandboxed command (or one setup phase), on a Unix socket of its own.

    `deny_hosts` are Stepwise's own services (Redis, the web app): their addresses are refused
    even where they are public. The first EGRESS_RECORDS tunnels asked for are kept in
    `records` (jobs/inputs/caps.py), the rest only counted in `dropped`.
    """

    def __init__(self, allow: Sequence[str], *, deny_hosts: Sequence[str] = ()) -> None:
        self.allowlist = Allowlist(tuple(allow))
        self.records: list[EgressRecord] = []
        self.dropped = 0
        self.open_connections = 0
        self._denied = _resolve_all(deny_hosts)
        self._dir = Path(tempfile.mkdtemp(prefix="stepwise-egress-"))
        self.socket_path = self._dir / "egress.sock"
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True,
                                        name="stepwise-egress")
        self._server: asyncio.AbstractServer | None = None

    def __enter__(self) -> EgressProxy:
        self.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop()

    def start(self) -> None:
        self._thread.start()
        started = asyncio.run_coroutine_threadsafe(
            asyncio.start_unix_server(self._serve, path=str(self.socket_path)), self._loop)
        self._server = started.result(timeout=10)
        self.socket_path.chmod(0o666)  # the sandbox may run as another uid mapping

    def stop(self) -> None:
        if self._server is not None:
            server = self._server
            self._server = None

            async def close() -> None:
                server.close()
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(server.wait_closed(), 2)
                for task in asyncio.all_tasks():
                    if task is not asyncio.current_task():
                        task.cancel()

            with contextlib.suppress(Exception):
                asyncio.run_coroutine_threadsafe(close(), self._loop).result(timeout=5)
        if self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=5)
        with contextlib.suppress(OSError):
            self.socket_path.unlink()
        with contextlib.suppress(OSError):
            self._dir.rmdir()

    # -- one client connection -----------------------------------------------------------
    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.open_connections >= caps.EGRESS_CONNECTIONS:
            self.dropped += 1
            with contextlib.suppress(OSError):
                await _answer(writer, 503, "too many connections open through the proxy")
            writer.close()
            return
        self.open_connections += 1
        try:
            await self._tunnel(reader, writer)
        except (TimeoutError, OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
            pass
        finally:
            self.open_connections -= 1
            writer.close()

    async def _tunnel(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), HEAD_TIMEOUT_S)
        if len(head) > HEAD_LIMIT:
            await _answer(writer, 431, "request head too large")
            return
        method, target = _request_line(head)
        if method != "CONNECT":
            self._record(EgressRecord(target, 0, False, "only CONNECT (HTTPS) is proxied"))
            await _answer(writer, 405, "only HTTPS (CONNECT) is proxied")
            return
        host, port = _host_port(target)
        upstream, reason = await self._check(host, port)
        if upstream is None:
            self._record(EgressRecord(host, port, False, reason))
            log.info("egress refused: %s:%s (%s)", host, port, reason)
            await _answer(writer, 403, reason)
            return
        try:
            up_reader, up_writer = await asyncio.wait_for(
                asyncio.open_connection(*upstream), CONNECT_TIMEOUT_S)
        except (TimeoutError, OSError) as exc:
            reason = unreachable(host, port, str(exc) or type(exc).__name__)
            self._record(EgressRecord(host, port, False, reason, upstream[0]))
            await _answer(writer, 502, reason)
            return
        self._record(EgressRecord(host, port, True, "", upstream[0]))
        writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        await writer.drain()
        activity = _Activity(time.monotonic())
        await asyncio.gather(_pipe(reader, up_writer, activity),
                             _pipe(up_reader, writer, activity))

    def _record(self, record: EgressRecord) -> None:
        if len(self.records) < caps.EGRESS_RECORDS:
            self.records.append(record)
        else:
            self.dropped += 1

    async def _check(self, host: str, port: int) -> tuple[tuple[str, int] | None, str]:
        """Where a tunnel to `host:port` goes (the address checked, and the port), or None and
        why not."""
        if not self.allowlist.admits(host, port):
            return None, not_allowed(host, port)
        try:
            infos = await asyncio.get_running_loop().getaddrinfo(
                host, port, type=socket.SOCK_STREAM)
        except OSError as exc:
            return None, no_resolution(host, str(exc))
        addresses = sorted({str(info[4][0]) for info in infos})
        for address in addresses:
            why = denied_address(address)
            if why is None and address in self._denied:
                why = f"{address} belongs to Stepwise's own services"
            if why is not None:
                return None, why if host == address else f"{host} resolves to {address}, and {why}"
        return ((addresses[0], port), "") if addresses else (None, f"{host} has no address")


def _resolve_all(hosts: Sequence[str]) -> set[str]:
    found: set[str] = set()
    for host in hosts:
        with contextlib.suppress(OSError):
            found.update(str(info[4][0]) for info in socket.getaddrinfo(host, None))
    return found


def _request_line(head: bytes) -> tuple[str, str]:
    line = head.split(b"\r\n", 1)[0].decode("latin-1")
    parts = line.split()
    if len(parts) != 3 or not parts[2].startswith("HTTP/"):
        raise ValueError(f"not an HTTP request line: {line[:100]!r}")
    return parts[0].upper(), parts[1]


def _host_port(target: str) -> tuple[str, int]:
    if target.startswith("["):  # [v6]:port
        host, _, rest = target[1:].partition("]")
        port = rest.lstrip(":")
    else:
        host, _, port = target.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"not host:port: {target[:100]!r}")
    return normalise_host(host), int(port)


async def _answer(writer: asyncio.StreamWriter, status: int, reason: str) -> None:
    body = f"Stepwise egress proxy: {reason}\n".encode()
    writer.write(f"HTTP/1.1 {status} Refused\r\nContent-Type: text/plain\r\n"
                 f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode() + body)
    with contextlib.suppress(OSError):
        await writer.drain()


@dataclass
class _Activity:
    """When a tunnel last carried a byte, in either direction."""

    last: float = 0.0


IDLE_CHECK_S = 5.0


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                activity: _Activity | None = None) -> None:
    """Copy one direction of a tunnel; give up once neither direction carried anything for
    caps.EGRESS_IDLE_S (an idle tunnel holds no connection open for ever)."""
    activity = activity if activity is not None else _Activity(time.monotonic())
    try:
        while True:
            try:
                chunk = await asyncio.wait_for(reader.read(64 * 1024),
                                               min(IDLE_CHECK_S, caps.EGRESS_IDLE_S))
            except TimeoutError:
                if time.monotonic() - activity.last >= caps.EGRESS_IDLE_S:
                    break
                continue
            if not chunk:
                break
            activity.last = time.monotonic()
            writer.write(chunk)
            await writer.drain()
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            writer.close()
