"""Branch moves through one long-lived `git update-ref --stdin` (jobs/adapters/ref_updates.py):
still compare-and-set (a branch someone moved is refused with git's message and left where they
put it), and a process that dies or is refused leaves the next move to a fresh one."""

from __future__ import annotations

from pathlib import Path

import pytest

from jobs.adapters.workspace import Repository
from jobs.basics.errors import WorkspaceError
from tests.kit.repos import git, make_repo


def commit_on(repo: Path, parent: str, message: str) -> str:
    return git(repo, "commit-tree", f"{parent}^{{tree}}", "-p", parent, "-m", message)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    git(path, "branch", "job")
    return path


def test_moves_go_through_one_process(repo: Path) -> None:
    repository = Repository(repo)
    head = git(repo, "rev-parse", "job")
    for number in range(3):
        new = commit_on(repo, head, f"batch {number}")
        assert repository.advance_branch("job", new, head) == new
        assert git(repo, "rev-parse", "job") == new
        head = new
    assert repository.refs.session.started == 1
    repository.close()


def test_a_branch_someone_moved_is_refused_and_left_where_they_put_it(repo: Path) -> None:
    repository = Repository(repo)
    head = git(repo, "rev-parse", "job")
    repository.advance_branch("job", first := commit_on(repo, head, "batch 1"), head)
    theirs = commit_on(repo, first, "a person's commit")
    git(repo, "update-ref", "refs/heads/job", theirs)
    ours = commit_on(repo, first, "batch 2")
    with pytest.raises(WorkspaceError, match="expected"):
        repository.advance_branch("job", ours, first)
    assert git(repo, "rev-parse", "job") == theirs
    later = commit_on(repo, theirs, "batch 2 again")
    assert repository.advance_branch("job", later, theirs) == later  # a fresh process
    assert git(repo, "rev-parse", "job") == later
    repository.close()


def test_a_process_that_died_is_replaced(repo: Path) -> None:
    repository = Repository(repo)
    head = git(repo, "rev-parse", "job")
    repository.advance_branch("job", first := commit_on(repo, head, "batch 1"), head)
    process = repository.refs.session._process
    assert process is not None
    process.kill()
    process.wait()
    repository.advance_branch("job", second := commit_on(repo, first, "batch 2"), first)
    assert git(repo, "rev-parse", "job") == second
    repository.close()
