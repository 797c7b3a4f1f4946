"""Why a command that used the network failed, when the network is the cause (pure).

The egress proxy (jobs/adapters/egress.py) records every tunnel a command asks for as one line,
`host:port allowed` or `host:port refused: <reason>`, with the reasons written by the functions
below, so this module reads back exactly what the proxy wrote. A failed command whose record
holds a refusal, a name that does not resolve, or whose output says a certificate was not
trusted behind an allowed tunnel (a TLS-inspecting proxy) has that as its cause: the gate, the
status card, the PR comment and the change note name it first, with the fix, instead of the
generic hint for a failing command.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from jobs.kernel.records import CommandEvidence

NOT_ALLOWED = "is not on network_allow"
NO_RESOLUTION = "does not resolve"
UNREACHABLE = "could not be connected to"
CONFIG = ".github/stepwise.yml"
# The operator's trust store variables the sandbox is given (jobs/adapters/sandbox_view.py).
TRUST_HINT = "`SSL_CERT_FILE`, `REQUESTS_CA_BUNDLE`, `PIP_CERT` or `NODE_EXTRA_CA_CERTS`"
_UNTRUSTED_CERTIFICATE = re.compile(
    r"CERTIFICATE_VERIFY_FAILED|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_GET_ISSUER_CERT_LOCALLY|"
    r"self[- ]signed certificate in certificate chain|unable to get local issuer certificate|"
    r"certificate verify failed", re.I)


def not_allowed(host: str, port: int) -> str:
    return f"{host}:{port} {NOT_ALLOWED}"


def no_resolution(host: str, error: str) -> str:
    return f"{host} {NO_RESOLUTION}: {error}"


def unreachable(host: str, port: int, error: str) -> str:
    return f"{host}:{port} {UNREACHABLE}: {error}"


@dataclass(frozen=True)
class NetworkCause:
    """What the network did to a failed command: `what` (one sentence, first in the gate) and
    `fix` (the next move)."""

    what: str
    fix: str


# What a `host:port` the proxy parsed may look like; anything else the sandboxed command wrote
# in its CONNECT line is named as such, never repeated into a comment.
_WHERE = re.compile(r"[a-z0-9._*\[\]:-]{1,300}")


def refusals(egress: Sequence[str]) -> list[tuple[str, str]]:
    """The refused tunnels of one command as (`host:port`, reason), in the order asked."""
    found = []
    for line in egress:
        where, sep, reason = line.partition(" refused: ")
        if not sep:
            continue
        if not _WHERE.fullmatch(where):
            where, reason = "a malformed host name", "refused by the egress proxy"
        if (where, reason) not in found:
            found.append((where, reason))
    return found


def network_cause(failed: CommandEvidence, *, who: str) -> NetworkCause | None:
    """The network's part in `failed` (None when the network is not the cause). `who` is what
    ran it ("setup", "validation"). A host off the allowlist comes first, then a name that did
    not resolve, an address never reached, a connection that failed, and last a certificate the
    command did not trust behind an allowed tunnel."""
    if failed.exit_code == 0 and not failed.timed_out:
        return None
    refused = refusals(failed.egress)
    for marker, describe in ((NOT_ALLOWED, _off_the_list), (NO_RESOLUTION, _no_name),
                             (UNREACHABLE, _no_connection), ("", _never_reached)):
        chosen = [(where, reason) for where, reason in refused if marker in reason]
        if chosen:
            cause = describe(who, chosen[0][0], chosen[0][1])
            others = [where for where, _ in refused if where != chosen[0][0]]
            return cause if not others else NetworkCause(
                f"{cause.what} (also refused: {', '.join(others[:5])}"
                + (f" and {len(others) - 5} more" if len(others) > 5 else "") + ")", cause.fix)
    allowed = [line.split(" ", 1)[0] for line in failed.egress if line.endswith(" allowed")]
    if allowed and _UNTRUSTED_CERTIFICATE.search(failed.output_tail):
        return NetworkCause(
            f"{who} reached {allowed[-1]} through Stepwise's egress proxy but did not trust the "
            "certificate it was shown (a TLS-inspecting proxy between Stepwise and the registry?)",
            f"set {TRUST_HINT} where Stepwise runs to a bundle holding that proxy's CA "
            "certificate (Stepwise passes them on to the sandbox)")
    return None


def _off_the_list(who: str, where: str, _reason: str) -> NetworkCause:
    return NetworkCause(
        f"{who} could not reach {where} (not on `network_allow`)",
        f"add it to `network_allow` in {CONFIG} (which then replaces the default: list the "
        "registries too), or configure it as a package index (`PIP_INDEX_URL`, `pip.conf`, "
        "`uv.toml`, `.npmrc` `registry=`)")


def _no_name(who: str, where: str, reason: str) -> NetworkCause:
    host = where.rsplit(":", 1)[0]
    return NetworkCause(
        f"{who} could not reach {where}: the name {host} does not resolve where Stepwise runs "
        f"({reason.split(': ', 1)[-1]})",
        "check the host name (in `network_allow` or the package index that names it) and the "
        "DNS of the machine Stepwise runs on")


def _no_connection(who: str, where: str, reason: str) -> NetworkCause:
    return NetworkCause(
        f"{who} could not reach {where}: {reason.split(': ', 1)[-1]}",
        "check that the host serves HTTPS on that port and that the machine Stepwise runs on "
        "may connect to it (a firewall, an outbound proxy)")


def _never_reached(who: str, where: str, reason: str) -> NetworkCause:
    return NetworkCause(
        f"{who} could not reach {where}: {reason}",
        "sandboxed commands never reach loopback, link-local (cloud metadata), private ranges or "
        "Stepwise's own services, whatever `network_allow` says: install from a registry at a "
        "public address")
