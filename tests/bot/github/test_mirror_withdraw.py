"""Withdrawing a CI-rejected candidate on the remote (bot/github/mirror.py): a force push with a
lease on the candidate's exact sha, refused when someone pushed on top, against FakeGitHub's
bare repositories by path and by smart HTTP."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from jobs.adapters.workspace import WithdrawRefusedError
from tests.bot.github.test_mirror import (
    BRANCH,
    NAME,
    OWNER,
    REPO,
    assert_no_secret,
    commit_on,
    error_text,
    local_head,
    mirror,
)
from tests.kit.github import FakeGitHub


@pytest.fixture(params=["path", "http"])
def hub(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[FakeGitHub]:
    with FakeGitHub(root=tmp_path / "gh", git_http=request.param == "http") as fake:
        fake.add_repo(OWNER, NAME, {"src/a.py": "x = 1\n", "README.md": "hi\n"})
        yield fake


def test_withdraw_moves_the_remote_branch_back_to_the_parent(hub: FakeGitHub,
                                                             tmp_path: Path) -> None:
    repo = mirror(hub, tmp_path / "work")
    parent = hub.push_files(REPO, BRANCH, {"src/a.py": "x = 2\n"}, "batch 1")
    assert repo.branch_head(BRANCH) == parent
    candidate = commit_on(repo, parent, "batch 2")
    repo.advance_branch(BRANCH, candidate, parent)
    assert hub.branch_head(REPO, BRANCH) == candidate
    repo.withdraw(BRANCH, candidate, parent)
    assert hub.branch_head(REPO, BRANCH) == parent == local_head(repo, BRANCH)
    assert hub.git_log(REPO, BRANCH)[0] == "batch 1"


def test_withdraw_is_refused_when_someone_pushed_on_top(hub: FakeGitHub, tmp_path: Path) -> None:
    repo = mirror(hub, tmp_path / "work")
    parent = hub.push_files(REPO, BRANCH, {"src/a.py": "x = 2\n"}, "batch 1")
    assert repo.branch_head(BRANCH) == parent
    candidate = commit_on(repo, parent, "batch 2")
    repo.advance_branch(BRANCH, candidate, parent)
    theirs = hub.push_files(REPO, BRANCH, {"README.md": "a human was here\n"}, "human commit")
    with pytest.raises(WithdrawRefusedError) as refused:
        repo.withdraw(BRANCH, candidate, parent)
    assert refused.value.code == "withdraw_refused" and "no longer at" in refused.value.message
    assert hub.branch_head(REPO, BRANCH) == theirs  # their commit is kept: no rewrite
    assert hub.git_log(REPO, BRANCH)[:2] == ["human commit", "batch 2"]
    assert_no_secret(hub, error_text(refused.value))
