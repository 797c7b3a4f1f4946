"""A bounded HTTP cache with conditional requests: githubkit's process-wide hishel cache is off;
the CI wait's check-run and status reads send the last answer's ETag, and a 304 (which GitHub
does not count against the rate limit) is answered from a store bounded in bytes."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from bot.github.app import GitHubApp
from bot.github.ci import RepositoryCi
from bot.github.conditional import ConditionalReads
from tests.kit.github import FakeGitHub
from tests.kit.github_ci import CiPlayer

OWNER, NAME = "octo", "widgets"
REPO = f"{OWNER}/{NAME}"


@pytest.fixture
def gh(tmp_path: Path) -> Iterator[FakeGitHub]:
    with FakeGitHub(root=tmp_path / "gh") as fake:
        fake.add_repo(OWNER, NAME, {"calc/a.py": "x = 1\n"})
        yield fake


def test_polled_ci_reads_are_conditional_and_a_change_is_seen(gh: FakeGitHub) -> None:
    app = GitHubApp(app_id=gh.app_id, private_key=gh.private_key_pem, base_url=gh.base_url)
    assert app._app.config.http_cache is False  # no unbounded process-wide cache
    assert app.installation_client(1).config.http_cache is False
    sha = gh.branch_head(REPO, "main")
    assert sha is not None
    ci, player = RepositoryCi(app.client(1), REPO), CiPlayer(gh, gh.repos[REPO])
    player.report(sha, "tests", "failure")
    first = ci.check_runs(sha), ci.statuses(sha)
    later = gh.clock() + timedelta(seconds=30)
    gh.clock = lambda: later  # time passes between polls: an unchanged answer is still 304
    again = ci.check_runs(sha), ci.statuses(sha)  # the CI wait polls: nothing changed
    assert again == first and gh.not_modified == 2 and app.conditional.not_modified == 2
    polled = gh.requests_to("GET", r"/check-runs$")
    assert polled[-1].status == 304 and "if-none-match" in polled[-1].headers
    player.report(sha, "tests", "success")
    runs = ci.check_runs(sha)
    assert [(r.name, r.conclusion) for r in runs] == [("tests", "success")]
    assert polled[-1] is not gh.requests_to("GET", r"/check-runs$")[-1]
    assert gh.requests_to("GET", r"/check-runs$")[-1].status == 200  # changed: a new answer


class Answer:
    def __init__(self, status: int, etag: str, data: Any, size: int) -> None:
        self.status_code, self.headers, self._data = status, {"etag": etag}, data
        self.content = b"x" * size

    def json(self) -> Any:
        return self._data


def test_the_store_is_bounded_by_bytes_oldest_first() -> None:
    reads = ConditionalReads(max_bytes=1000)
    for n in range(10):
        reads.read(("key", n), lambda headers, n=n: Answer(200, f'"{n}"', {"n": n}, 200))
    assert reads.size <= 1000 and len(reads) == 5
    sent: list[dict[str, str]] = []

    def fetch(headers: dict[str, str]) -> Answer:
        sent.append(headers)
        return Answer(304, '"9"', None, 0)

    assert reads.read(("key", 9), fetch) == {"n": 9} and sent == [{"If-None-Match": '"9"'}]
    reads.read(("big", 0), lambda headers: Answer(200, '"b"', {}, 600))  # over a quarter: not kept
    assert ("big", 0) not in reads._entries and reads.size <= 1000
