"""The fake GitHub's error injection (tests/kit/github_faults.py), seen by the real githubkit
client: a failing token mint, a failing route, a secondary rate limit, a random failure rate."""

from __future__ import annotations

import contextlib
import socket
from datetime import timedelta
from typing import Any

import pytest
from githubkit import GitHub
from githubkit.exception import RequestError, RequestFailed, SecondaryRateLimitExceeded

from tests.kit.fake_github_kit import NAME, OWNER
from tests.kit.github import FakeGitHub


def test_injected_errors(gh: FakeGitHub, client: GitHub[Any]) -> None:
    gh.fail("POST", r"/access_tokens$", 502)
    with pytest.raises(RequestError) as mint_failed:
        client.rest.repos.get(OWNER, NAME)
    cause = mint_failed.value.exc
    assert isinstance(cause, RequestFailed) and cause.response.status_code == 502
    gh.fail("GET", rf"^/repos/{OWNER}/{NAME}$", 502)
    with pytest.raises(RequestFailed) as failed:
        client.rest.repos.get(OWNER, NAME)
    assert failed.value.response.status_code == 502
    assert client.rest.repos.get(OWNER, NAME).status_code == 200
    gh.fail_secondary_rate_limit("POST", r"/comments$", retry_after=7)
    number = gh.add_issue(f"{OWNER}/{NAME}", "t", "b")
    with pytest.raises(SecondaryRateLimitExceeded) as limited:
        client.rest.issues.create_comment(OWNER, NAME, number, body="x")
    assert limited.value.retry_after == timedelta(seconds=7)
    assert gh.effects == []
    gh.fail_rate(0.5, statuses=(502, 503), seed=3)
    for _ in range(20):
        with contextlib.suppress(RequestFailed):
            client.rest.repos.get(OWNER, NAME)
    statuses = [r.status for r in gh.requests[-20:]]  # a 304: the client's cache revalidated (ETag)
    answered = statuses.count(200) + statuses.count(304)
    assert {200, 304, 502, 503} >= set(statuses) and 3 < answered < 17


def test_the_fake_says_why_it_refuses_a_request(
        gh: FakeGitHub, capfd: pytest.CaptureFixture[str]) -> None:
    """The fake never hangs up or refuses in silence: what it could not read is said on stderr,
    so a client's "server disconnected" or 400 comes with its reason in the test's output."""
    port = int(gh.web_url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(b"BREW /pot HTTP/1.1\r\nHost: github\r\n\r\n")  # no such method
        answer = sock.recv(4096)
    assert answer.startswith(b"HTTP/1.1 501 "), answer
    said = capfd.readouterr().err
    assert "fake GitHub, connection from ('127.0.0.1'," in said and "'BREW'" in said, said
