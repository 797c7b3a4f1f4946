"""Withdrawing a CI-rejected candidate on the remote (bot/github/mirror.py): with API commits
(server mode's default) the ref is read, compared with the candidate and forced back through
the Git Data API; with `commit_via: git`, a force push with a lease on the candidate's exact
sha. Refused when someone pushed on top, against FakeGitHub's bare repositories by path and by
smart HTTP."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.github.mirror import MirroredRepository
from jobs.adapters.workspace import WithdrawRefusedError
from jobs.basics.errors import WORKFLOW_PERMISSION, WorkspaceError
from tests.bot.github.test_git_data import WORKFLOW, api_mirror, commit_files
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


# --- with API commits: compare the ref, then force it through the Git Data API -------------------
@pytest.fixture
def api_hub(tmp_path: Path) -> Iterator[FakeGitHub]:
    with FakeGitHub(root=tmp_path / "gh-api", git_http=True) as fake:
        fake.add_repo(OWNER, NAME, {"src/a.py": "x = 1\n", WORKFLOW: "on: push\n"})
        yield fake


def no_pushes(repo: MirroredRepository) -> list[tuple[str, ...]]:
    """Record every git call to the remote; a withdraw through the API makes no push."""
    calls: list[tuple[str, ...]] = []
    remote = repo.remote

    def recorded(*args: str) -> str:
        calls.append(args)
        return remote(*args)

    repo.remote = recorded  # type: ignore[method-assign]
    return calls


def test_with_api_commits_a_candidate_touching_a_workflow_is_withdrawn_through_the_api(
        api_hub: FakeGitHub, tmp_path: Path) -> None:
    repo = api_mirror(api_hub, tmp_path / "work")
    base = repo.branch_head("main")
    assert base is not None
    parent = repo.advance_branch(BRANCH, commit_files(repo, base, {"src/a.py": b"x = 2\n"},
                                                      "batch 1"), base)
    candidate = repo.advance_branch(BRANCH, commit_files(
        repo, parent, {WORKFLOW: b"on: [push, pull_request]\n", "src/a.py": b"x = 3\n"},
        "batch 2"), parent)
    assert api_hub.branch_head(REPO, BRANCH) == candidate != parent
    calls = no_pushes(repo)
    repo.withdraw(BRANCH, candidate, parent)
    assert api_hub.branch_head(REPO, BRANCH) == parent == local_head(repo, BRANCH)
    assert api_hub.read_file(REPO, WORKFLOW, ref=BRANCH) == "on: push\n"
    assert not [c for c in calls if "push" in c]
    read, forced = api_hub.requests[-2:]
    assert (read.method, read.path, read.status) == (
        "GET", f"/repos/{REPO}/git/ref/heads/{BRANCH}", 200)
    assert (forced.method, forced.json, forced.status) == (
        "PATCH", {"sha": parent, "force": True}, 200)


def test_with_api_commits_a_branch_someone_moved_is_not_withdrawn(api_hub: FakeGitHub,
                                                                  tmp_path: Path) -> None:
    repo = api_mirror(api_hub, tmp_path / "work")
    base = repo.branch_head("main")
    assert base is not None
    parent = repo.advance_branch(BRANCH, commit_files(repo, base, {"src/a.py": b"x = 2\n"},
                                                      "batch 1"), base)
    candidate = repo.advance_branch(BRANCH, commit_files(repo, parent, {"src/a.py": b"x = 3\n"},
                                                         "batch 2"), parent)
    theirs = api_hub.push_files(REPO, BRANCH, {"src/b.py": "y = 1\n"}, "human commit")
    with pytest.raises(WithdrawRefusedError) as refused:
        repo.withdraw(BRANCH, candidate, parent)
    assert refused.value.code == "withdraw_refused" and f"`{theirs[:7]}`" in refused.value.message
    assert api_hub.branch_head(REPO, BRANCH) == theirs
    assert not [r for r in api_hub.requests_to("PATCH", r"/git/refs/heads/") if r.json["force"]]


def test_with_api_commits_a_refused_forced_update_is_an_error_not_a_lost_branch(
        api_hub: FakeGitHub, tmp_path: Path) -> None:
    repo = api_mirror(api_hub, tmp_path / "work")
    base = repo.branch_head("main")
    assert base is not None
    parent = repo.advance_branch(BRANCH, commit_files(repo, base, {"src/a.py": b"x = 2\n"},
                                                      "batch 1"), base)
    candidate = repo.advance_branch(BRANCH, commit_files(
        repo, parent, {WORKFLOW: b"on: [push]\n"}, "batch 2"), parent)
    del api_hub.installations[1].permissions["workflows"]  # withdrawn on another installation
    assert repo.api is not None
    repo.api.client.app.forget_token(1)
    with pytest.raises(WorkspaceError) as refused:
        repo.withdraw(BRANCH, candidate, parent)
    assert refused.value.code == WORKFLOW_PERMISSION and "workflow" in refused.value.message
    assert api_hub.branch_head(REPO, BRANCH) == candidate == local_head(repo, BRANCH)
