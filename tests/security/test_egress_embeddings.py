"""The egress proxy never reaches a private IPv4 address written as IPv6: every embedding
(IPv4-compatible, -mapped, -translated, NAT64 and its local-use prefix, 6to4, Teredo)."""

from __future__ import annotations

import pytest

from jobs.adapters.egress import EgressProxy, denied_address
from tests.jobs.adapters.test_egress import connect

EMBEDDINGS = [
    "::127.0.0.1", "::a9fe:a9fe",  # IPv4-compatible: loopback, cloud metadata
    "::ffff:127.0.0.1", "::ffff:10.1.2.3",  # IPv4-mapped
    "::ffff:0:7f00:1", "::ffff:0:a9fe:a9fe",  # IPv4-translated
    "64:ff9b::7f00:1", "64:ff9b::c0a8:101",  # NAT64 well-known prefix
    "64:ff9b:1::a00:1", "64:ff9b:1:7f:0:100::",  # NAT64 local-use prefix (RFC 8215)
    "2002:7f00:1::", "2002:a9fe:a9fe::1",  # 6to4
    "2001:0:4136:e378:8000:63bf:80ff:fffe",  # Teredo, client 127.0.0.1
    "2001:0:a00:1::1",  # Teredo, server 10.0.0.1
]


@pytest.mark.parametrize("address", EMBEDDINGS)
def test_every_ipv6_embedding_of_a_private_ipv4_is_denied(address: str) -> None:
    assert denied_address(address) is not None, address


@pytest.mark.parametrize("address", ["2606:4700:4700::1111", "2a04:4e42::223",
                                     "64:ff9b::808:808", "::ffff:8.8.8.8"])
def test_public_ipv6_and_embeddings_of_public_ipv4_pass(address: str) -> None:
    assert denied_address(address) is None


def test_the_proxy_refuses_them_even_when_allowlisted() -> None:
    targets = ["::ffff:0:7f00:1", "64:ff9b:1::a00:1", "::127.0.0.1", "2001:0:4136:e378:8000:63bf:80ff:fffe"]
    with EgressProxy([f"[{t}]" for t in targets] + targets) as proxy:
        for target in targets:
            assert connect(proxy, f"[{target}]:443").startswith(b"HTTP/1.1 403"), target
    assert len(proxy.records) == len(targets)
    assert not any(record.allowed for record in proxy.records)
