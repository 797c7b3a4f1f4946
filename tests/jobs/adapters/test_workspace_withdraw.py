"""Withdrawing a CI-rejected candidate locally (jobs/adapters/workspace.py): the branch moves
back to the parent only while it is exactly at the candidate."""

from __future__ import annotations

from pathlib import Path

import pytest

from jobs.adapters.workspace import Repository, WithdrawRefusedError
from tests.kit.repos import commit_all, git, make_repo, write_files


def test_withdraw_moves_the_branch_back_only_from_the_candidate(tmp_path: Path) -> None:
    path = make_repo(tmp_path / "repo", {"README.md": "# one\n"})
    repo = Repository(path)
    base = git(path, "rev-parse", "HEAD")
    write_files(path, {"README.md": "# two\n"})
    candidate = commit_all(path, "two")
    repo.create_branch("job", candidate)
    repo.withdraw("job", candidate, base)
    assert repo.branch_head("job") == base


def test_withdraw_is_refused_when_the_branch_moved_on(tmp_path: Path) -> None:
    path = make_repo(tmp_path / "repo", {"README.md": "# one\n"})
    repo = Repository(path)
    base = git(path, "rev-parse", "HEAD")
    write_files(path, {"README.md": "# two\n"})
    candidate = commit_all(path, "two")
    write_files(path, {"README.md": "# three\n"})
    theirs = commit_all(path, "a human on top")
    repo.create_branch("job", theirs)
    with pytest.raises(WithdrawRefusedError, match="no longer at"):
        repo.withdraw("job", candidate, base)
    assert repo.branch_head("job") == theirs
