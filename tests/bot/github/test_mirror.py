"""Server-mode git (bot/github/mirror.py) against FakeGitHub's bare repositories, by path and smart HTTP."""

from __future__ import annotations

import base64
import traceback
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.github.app import GitHubApp
from bot.github.client import Installation
from bot.github.mirror import MirroredRepository, open_mirror
from jobs.basics.errors import RetryClass, WorkspaceError
from tests.kit.github import FakeGitHub
from tests.kit.repos import git

OWNER, NAME = "octo", "widgets"
REPO = f"{OWNER}/{NAME}"
BRANCH = "stepwise/issue-1"


@pytest.fixture(params=["path", "http"])
def gh(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[FakeGitHub]:
    with FakeGitHub(root=tmp_path / "gh", git_http=request.param == "http") as fake:
        fake.add_repo(OWNER, NAME, {"src/a.py": "x = 1\n", "README.md": "hi\n"})
        yield fake


@pytest.fixture
def http_gh(tmp_path: Path) -> Iterator[FakeGitHub]:
    with FakeGitHub(root=tmp_path / "gh-http", git_http=True) as fake:
        fake.add_repo(OWNER, NAME, {"src/a.py": "x = 1\n", "README.md": "hi\n"})
        yield fake


def installation(gh: FakeGitHub) -> Installation:
    return GitHubApp(app_id=gh.app_id, private_key=gh.private_key_pem, base_url=gh.base_url,
                     timeout=10).client(1)


def mirror(gh: FakeGitHub, workdir: Path, inst: Installation | None = None) -> MirroredRepository:
    inst = inst or installation(gh)
    return open_mirror(workdir, REPO, gh.repos[REPO].clone_url, auth=inst.git_auth_args,
                       default_branch="main")


def local_head(repo: MirroredRepository, branch: str) -> str | None:
    out = git(repo.root, "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}", check=False)
    return out or None


def commit_on(repo: MirroredRepository, parent: str, message: str) -> str:
    """A new commit in the mirror on top of `parent` (what the engine makes in a worktree)."""
    return git(repo.root, "commit-tree", f"{parent}^{{tree}}", "-p", parent, "-m", message)


def secrets_of(gh: FakeGitHub) -> list[str]:
    """Every token the fake issued, and the basic-auth value carrying it."""
    found = []
    for token in gh.tokens:
        found += [token, base64.b64encode(f"x-access-token:{token}".encode()).decode()]
    return found


def assert_no_secret(gh: FakeGitHub, text: str) -> None:
    assert gh.tokens, "the test should have minted a token"
    for secret in secrets_of(gh):
        assert secret not in text


def error_text(error: WorkspaceError) -> str:
    return "\n".join([str(error), repr(error), error.message, error.hint, str(error.evidence),
                      *traceback.format_exception(error)])


# --- the cached bare clone ----------------------------------------------------------------------


def test_clone_is_bare_and_a_second_open_fetches(gh: FakeGitHub, tmp_path: Path) -> None:
    workdir = tmp_path / "work"
    first = mirror(gh, workdir)
    assert first.root == (workdir / "repos" / OWNER / f"{NAME}.git").resolve()
    assert git(first.root, "rev-parse", "--is-bare-repository") == "true"
    assert local_head(first, "main") == gh.branch_head(REPO, "main")
    (first.root / "stepwise-marker").write_text("from the first clone\n")
    moved = gh.push_files(REPO, "main", {"README.md": "changed upstream\n"}, "upstream change")
    second = mirror(gh, workdir)
    assert second.root == first.root
    assert (second.root / "stepwise-marker").exists()  # the same clone: fetched, not re-cloned
    assert local_head(second, "main") == moved


def test_the_clone_stores_no_token(gh: FakeGitHub, tmp_path: Path) -> None:
    repo = mirror(gh, tmp_path / "work")
    gh.push_files(REPO, BRANCH, {"src/a.py": "x = 2\n"}, "someone's branch")
    head = repo.branch_head(BRANCH)
    assert head is not None
    repo.advance_branch(BRANCH, commit_on(repo, head, "batch 1"), head)
    mirror(gh, tmp_path / "work")  # the fetch path too
    remotes = git(repo.root, "remote", "-v")
    assert gh.repos[REPO].clone_url in remotes
    assert_no_secret(gh, remotes)
    assert_no_secret(gh, git(repo.root, "config", "--list", "--show-origin"))
    assert_no_secret(gh, (repo.root / "config").read_text())
    for path in repo.root.rglob("*"):  # config, FETCH_HEAD, logs, packed-refs, ...
        if path.is_file() and "objects" not in path.parts:
            assert_no_secret(gh, path.read_bytes().decode("utf-8", "replace"))


def test_http_clone_needs_the_token(http_gh: FakeGitHub, tmp_path: Path) -> None:
    url = http_gh.repos[REPO].clone_url
    assert url.startswith("http://127.0.0.1:")
    with pytest.raises(WorkspaceError):
        open_mirror(tmp_path / "anonymous", REPO, url, auth=list, default_branch="main")
    repo = mirror(http_gh, tmp_path / "work")
    assert local_head(repo, "main") == http_gh.branch_head(REPO, "main")


# --- branch heads ----------------------------------------------------------------------------------


def test_branch_head_fetches_a_branch_someone_else_pushed(gh: FakeGitHub, tmp_path: Path) -> None:
    repo = mirror(gh, tmp_path / "work")
    assert local_head(repo, BRANCH) is None
    pushed = gh.push_files(REPO, BRANCH, {"src/a.py": "x = 2\n"}, "a human's commit")
    assert repo.branch_head(BRANCH) == pushed
    assert local_head(repo, BRANCH) == pushed  # the object and the ref are here now
    assert git(repo.root, "cat-file", "-t", pushed) == "commit"
    again = gh.push_files(REPO, BRANCH, {"src/a.py": "x = 3\n"}, "another")
    assert repo.branch_head(BRANCH) == again == local_head(repo, BRANCH)


def test_branch_head_of_a_branch_that_exists_nowhere_is_none(gh: FakeGitHub, tmp_path: Path) -> None:
    repo = mirror(gh, tmp_path / "work")
    assert repo.branch_head("stepwise/issue-404") is None
    assert repo.branch_head("main") == gh.branch_head(REPO, "main")


# --- moving a branch -------------------------------------------------------------------------------


def test_advance_branch_pushes(gh: FakeGitHub, tmp_path: Path) -> None:
    repo = mirror(gh, tmp_path / "work")
    base = gh.branch_head(REPO, "main")
    assert base is not None
    git(repo.root, "update-ref", f"refs/heads/{BRANCH}", base)  # the job branch starts at the base
    first = commit_on(repo, base, "batch 1")
    repo.advance_branch(BRANCH, first, base)
    assert gh.branch_head(REPO, BRANCH) == first == local_head(repo, BRANCH)
    second = commit_on(repo, first, "batch 2")
    repo.advance_branch(BRANCH, second, first)
    assert gh.branch_head(REPO, BRANCH) == second == repo.branch_head(BRANCH)
    assert gh.git_log(REPO, BRANCH)[:2] == ["batch 2", "batch 1"]
    if gh.git_http:
        assert gh.effects == [f"{REPO}:pushed:{BRANCH}:{first[:7]}", f"{REPO}:pushed:{BRANCH}:{second[:7]}"]


def test_push_after_the_remote_moved_is_rejected_and_undone(gh: FakeGitHub, tmp_path: Path) -> None:
    repo = mirror(gh, tmp_path / "work")
    start = gh.push_files(REPO, BRANCH, {"src/a.py": "x = 2\n"}, "batch 1")
    assert repo.branch_head(BRANCH) == start
    theirs = gh.push_files(REPO, BRANCH, {"README.md": "a human was here\n"}, "human commit")
    mine = commit_on(repo, start, "batch 2")
    with pytest.raises(WorkspaceError) as rejected:
        repo.advance_branch(BRANCH, mine, start)
    assert (rejected.value.code, rejected.value.retry_class) == ("push_rejected", RetryClass.AUTO_RETRY)
    assert rejected.value.hint
    assert local_head(repo, BRANCH) == start  # the local ref is back where it was
    assert gh.branch_head(REPO, BRANCH) == theirs  # nothing was forced
    assert_no_secret(gh, error_text(rejected.value))
    assert repo.branch_head(BRANCH) == theirs  # the next read sees the human's commit


def test_advance_branch_refuses_a_stale_local_old(gh: FakeGitHub, tmp_path: Path) -> None:
    repo = mirror(gh, tmp_path / "work")
    base = gh.branch_head(REPO, "main")
    assert base is not None
    new = commit_on(repo, base, "batch 1")
    with pytest.raises(WorkspaceError):
        repo.advance_branch("main", new, "0" * 39 + "1")
    assert gh.branch_head(REPO, "main") == base == local_head(repo, "main")


# --- auth failures ---------------------------------------------------------------------------------


def test_an_auth_failure_reveals_no_token(http_gh: FakeGitHub, tmp_path: Path) -> None:
    inst = installation(http_gh)
    repo = mirror(http_gh, tmp_path / "work", inst)
    http_gh.expire_tokens()  # the adapter still holds the token; the server refuses it now
    with pytest.raises(WorkspaceError) as on_read:
        repo.branch_head(BRANCH)
    with pytest.raises(WorkspaceError) as on_open:
        mirror(http_gh, tmp_path / "other-work", inst)
    with pytest.raises(WorkspaceError) as on_fetch:
        mirror(http_gh, tmp_path / "work", inst)
    head = local_head(repo, "main")
    assert head is not None
    with pytest.raises(WorkspaceError) as on_push:
        repo.advance_branch(BRANCH, commit_on(repo, head, "batch 1"), "0" * 40)
    assert local_head(repo, BRANCH) is None
    for error in (on_read.value, on_open.value, on_fetch.value, on_push.value):
        assert error.retry_class is RetryClass.AUTO_RETRY
        assert_no_secret(http_gh, error_text(error))
