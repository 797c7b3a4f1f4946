"""The fake GitHub enforces GitHub's limits as GitHub counts them (422 past them): bodies in
characters, check-run output in UTF-8 bytes, label names; and completed check runs are kept as
they are."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from githubkit import GitHub
from githubkit.exception import RequestFailed

from tests.kit.github import FakeGitHub

OWNER, NAME = "octo", "widgets"


@pytest.fixture
def gh(tmp_path: Path) -> Iterator[FakeGitHub]:
    with FakeGitHub(root=tmp_path / "gh") as fake:
        fake.add_repo(OWNER, NAME, {"a.py": "x = 1\n"})
        yield fake


def status_of(call: Any) -> int:
    try:
        call()
    except RequestFailed as exc:
        return int(exc.response.status_code)
    return 200


def test_bodies_are_counted_in_characters(gh: FakeGitHub) -> None:
    client: GitHub[Any] = gh.client()
    number = gh.add_issue(f"{OWNER}/{NAME}", "t", "b")
    exact = "ü" * 65_536  # 131,072 bytes, but 65,536 characters: GitHub takes it
    comment = client.rest.issues.create_comment(OWNER, NAME, number, body=exact).json()
    assert status_of(lambda: client.rest.issues.create_comment(OWNER, NAME, number, body=exact + "x")) == 422
    assert status_of(lambda: client.rest.issues.update_comment(OWNER, NAME, comment["id"],
                                                               body=exact + "x")) == 422
    assert status_of(lambda: client.rest.issues.update(OWNER, NAME, number, body=exact + "x")) == 422
    assert status_of(lambda: client.rest.issues.update(OWNER, NAME, number, title="t" * 257)) == 422
    assert status_of(lambda: client.rest.issues.add_labels(OWNER, NAME, number,
                                                           labels=["l" * 51])) == 422
    assert len(gh.comments_on(f"{OWNER}/{NAME}", number)) == 1


def test_check_run_output_is_counted_in_utf8_bytes(gh: FakeGitHub) -> None:
    client: GitHub[Any] = gh.client()
    sha = gh.branch_head(f"{OWNER}/{NAME}", "main")

    def create(summary: str) -> Any:
        return client.rest.checks.create(OWNER, NAME, data={
            "name": "Stepwise", "head_sha": sha, "status": "in_progress",
            "output": {"title": "t", "summary": summary}})

    assert status_of(lambda: create("a" * 65_535)) == 200
    assert status_of(lambda: create("ü" * 32_768)) == 422  # 32,768 characters, 65,536 bytes


def test_a_completed_check_run_cannot_be_updated(gh: FakeGitHub) -> None:
    client: GitHub[Any] = gh.client()
    sha = gh.branch_head(f"{OWNER}/{NAME}", "main")
    run = client.rest.checks.create(OWNER, NAME, data={
        "name": "Stepwise", "head_sha": sha, "status": "completed", "conclusion": "action_required",
        "output": {"title": "t", "summary": "s"}}).json()
    assert status_of(lambda: client.rest.checks.update(OWNER, NAME, run["id"], data={
        "status": "in_progress"})) == 422
    assert gh.repos[f"{OWNER}/{NAME}"].ci.runs[run["id"]].conclusion == "action_required"
