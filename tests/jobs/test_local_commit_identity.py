"""Local commits are authored by the checkout's configured git identity (issue 41.8), as `git
commit` would make them, so DCO and CLA checks that read the author accept them; Stepwise stays
the committer (how its own commits are told from people's). Without an identity configured, the
author is Stepwise."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.kit.local_e2e import (
    assert_exit,
    batch_commits,
    branch_commits,
    build_sample,
    issue,
    load_job,
    session,
)
from tests.kit.repos import git


def authors(repo: Path) -> list[str]:
    job = load_job(repo)
    shas = [c.sha for c in batch_commits(branch_commits(repo, job))]
    return [git(repo, "log", "-1", "--format=%an <%ae> / %cn <%ce>", sha).strip() for sha in shas]


def test_commits_are_authored_by_the_configured_identity(tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo")
    git(repo, "config", "user.name", "Ada Lovelace")
    git(repo, "config", "user.email", "ada@example.org")
    assert_exit(session(repo).run(issue(), yes=True), 0)
    assert authors(repo) == ["Ada Lovelace <ada@example.org> / Stepwise "
                             "<stepwise-bot@users.noreply.localhost>"] * 3


def test_without_an_identity_the_author_is_stepwise(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))  # no global git config
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.delenv("GIT_CONFIG_GLOBAL", raising=False)
    repo = build_sample(tmp_path / "repo")
    assert os.environ["HOME"] == str(home)
    assert_exit(session(repo).run(issue(), yes=True), 0)
    assert authors(repo) == ["Stepwise <stepwise-bot@users.noreply.localhost> / Stepwise "
                             "<stepwise-bot@users.noreply.localhost>"] * 3
