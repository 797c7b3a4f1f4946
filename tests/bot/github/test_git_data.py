"""Commits GitHub signs (bot/github/git_data.py) through a mirror fetched over smart HTTP: the
landed commit is GitHub's (verified), its tree the local one, blobs GitHub has are not sent
again, and refusals (someone pushed, no `workflows` permission) are told apart."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.github.app import GitHubApp
from bot.github.errors import ForgeError
from bot.github.git_data import ApiCommits
from bot.github.mirror import MirroredRepository, open_mirror
from jobs.adapters.worktree import identity_env
from jobs.basics.errors import WORKFLOW_PERMISSION, RetryClass, WorkspaceError
from tests.kit import github_git
from tests.kit.github import FakeGitHub

OWNER, NAME = "octo", "widgets"
REPO = f"{OWNER}/{NAME}"
BRANCH = "stepwise/issue-1"
WORKFLOW = ".github/workflows/ci.yml"


@pytest.fixture
def gh(tmp_path: Path) -> Iterator[FakeGitHub]:
    with FakeGitHub(root=tmp_path / "gh", git_http=True) as fake:
        fake.add_repo(OWNER, NAME, {"src/a.py": "x = 1\n", "README.md": "hi\n",
                                    WORKFLOW: "on: push\n"})
        yield fake


def api_mirror(gh: FakeGitHub, workdir: Path) -> MirroredRepository:
    client = GitHubApp(app_id=gh.app_id, private_key=gh.private_key_pem, base_url=gh.base_url,
                       timeout=10).client(1)
    repo = open_mirror(workdir, REPO, gh.repos[REPO].clone_url, auth=client.git_auth_args,
                       default_branch="main")
    repo.api = ApiCommits(client, REPO)
    return repo


def git(root: Path, *args: str, env: dict[str, str] | None = None,
        input_bytes: bytes | None = None) -> str:
    return github_git.git(root, *args, env=env, input_bytes=input_bytes).decode().strip()


def commit_files(repo: MirroredRepository, parent: str, files: dict[str, bytes | None],
                 message: str, *, parents: tuple[str, ...] = (),
                 identity: dict[str, str] | None = None) -> str:
    """A local commit of `files` (None deletes) on `parent`, as the engine writes one."""
    index = repo.root.parent / "test-index"
    env = {"GIT_INDEX_FILE": str(index)}
    git(repo.root, "read-tree", parent, env=env)
    lines = []
    for path, data in files.items():
        if data is None:
            lines.append(f"0 {'0' * 40}\t{path}\n")
            continue
        blob = git(repo.root, "hash-object", "-w", "--stdin", input_bytes=data)
        lines.append(f"100644 {blob}\t{path}\n")
    git(repo.root, "update-index", "--index-info", env=env, input_bytes="".join(lines).encode())
    tree = git(repo.root, "write-tree", env=env)
    index.unlink()
    extra = [arg for p in parents for arg in ("-p", p)]
    return git(repo.root, "commit-tree", tree, "-p", parent, *extra, "-m", message,
               env=identity)


def verified(gh: FakeGitHub, sha: str) -> bool:
    client = gh.client()
    data = client.request("GET", f"/repos/{REPO}/commits/{sha}").json()
    return bool(data["commit"]["verification"]["verified"])


def test_a_batch_lands_as_a_verified_commit_with_the_validated_tree(gh: FakeGitHub,
                                                                    tmp_path: Path) -> None:
    repo = api_mirror(gh, tmp_path / "work")
    base = repo.branch_head("main")
    assert base is not None
    files: dict[str, bytes | None] = {f"src/m{i}.py": f"v = {i}\n".encode() for i in range(50)}
    files["README.md"] = None
    files["logo.bin"] = bytes(range(256))
    files["src/copy.py"] = b"x = 1\n"  # the content of src/a.py, which stays where it is
    local = commit_files(repo, base, files, "stepwise(#1): batch 1\n\nStepwise-Job: j1\n")
    landed = repo.advance_branch(BRANCH, local, base)
    assert landed != local  # GitHub's commit: signed, so a sha of its own
    assert gh.branch_head(REPO, BRANCH) == landed
    assert git(repo.root, "rev-parse", f"refs/heads/{BRANCH}") == landed
    assert git(repo.root, "rev-parse", f"{landed}^{{tree}}") == \
        git(repo.root, "rev-parse", f"{local}^{{tree}}")
    # GitHub signs only a commit made with no custom author: the App's bot user is its author,
    # and the person who authored the local commit is credited in a trailer.
    message = gh.commits(REPO, BRANCH)[0].message
    assert message.endswith("Stepwise-Job: j1\nCo-authored-by: Fake Human <human@example.invalid>")
    [sent_commit] = [r.json for r in gh.requests_to("POST", r"/git/commits$")]
    assert set(sent_commit) == {"message", "tree", "parents"}
    shown = gh.client().request("GET", f"/repos/{REPO}/git/commits/{landed}").json()
    assert shown["author"]["name"] == "stepwise[bot]" and shown["committer"]["name"] == "GitHub"
    assert verified(gh, landed) and not verified(gh, base)
    # Text rides in the tree request; only the binary file is a blob of its own. What GitHub
    # has is looked up at the changed paths only, so a copy of a file that stays where it is
    # rides in the tree request like any new text.
    assert [e for e in gh.effects if ":blob-created:" in e] == \
        [f"{REPO}:blob-created:{git(repo.root, 'rev-parse', f'{local}:logo.bin')[:7]}"]
    [tree] = [r.json for r in gh.requests_to("POST", r"/git/trees$")]
    sent = {e["path"]: e for e in tree["tree"]}
    assert sent["src/copy.py"]["content"] == "x = 1\n"
    assert sent["src/m7.py"]["content"] == "v = 7\n" and sent["README.md"]["sha"] is None
    # a blob, the tree, the commit, and a ref update that finds no branch, then creates it
    assert repo.api is not None and repo.api.calls == 1 + 4


def test_a_moved_file_is_sent_by_sha_and_no_step_lists_the_whole_tree(
        gh: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """GitHub has the content of a file moved or put back (the parent held it at the path the
    change removes or replaces): it is named by sha, and a step reads the changed paths only,
    never a listing of the repository's whole tree (a step costs the same at any size)."""
    repo = api_mirror(gh, tmp_path / "work")
    base = repo.branch_head("main")
    assert base is not None
    art = bytes(range(256)) * 4
    first = repo.advance_branch(BRANCH, commit_files(repo, base, {"logo.bin": art}, "add\n"),
                                base)
    listings: list[list[str]] = []
    real_git = type(repo).git

    def watched(self: MirroredRepository, *args: str, **kwargs: Any) -> str:
        if "ls-tree" in args and "-r" in args:
            listings.append(list(args))
        return real_git(self, *args, **kwargs)

    monkeypatch.setattr(type(repo), "git", watched)
    before = len(gh.effects)
    moved = commit_files(repo, first, {"logo.bin": None, "art/logo.bin": art}, "move\n")
    repo.advance_branch(BRANCH, moved, first)
    assert not [e for e in gh.effects[before:] if ":blob-created:" in e]
    [_, tree] = [r.json for r in gh.requests_to("POST", r"/git/trees$")]
    sent = {e["path"]: e for e in tree["tree"]}
    assert sent["art/logo.bin"]["sha"] == git(repo.root, "rev-parse", f"{moved}:art/logo.bin")
    assert listings == []


def test_a_commit_the_app_authored_names_no_co_author(gh: FakeGitHub, tmp_path: Path) -> None:
    repo = api_mirror(gh, tmp_path / "work")
    repo.identity = identity_env("stepwise[bot]", "7+stepwise[bot]@users.noreply.github.com")
    base = repo.branch_head("main")
    assert base is not None
    local = commit_files(repo, base, {"a": b"1\n"}, "batch 1\n\nStepwise-Job: j1\n",
                         identity=repo.identity)
    landed = repo.advance_branch(BRANCH, local, base)
    assert gh.commits(REPO, BRANCH)[0].message.rstrip() == "batch 1\n\nStepwise-Job: j1"
    assert verified(gh, landed)


def test_a_merge_commit_keeps_both_parents_and_sends_no_blob_the_base_has(
        gh: FakeGitHub, tmp_path: Path) -> None:
    repo = api_mirror(gh, tmp_path / "work")
    base = repo.branch_head("main")
    assert base is not None
    first = repo.advance_branch(BRANCH, commit_files(repo, base, {"src/a.py": b"x = 2\n"},
                                                     "batch 1\n"), base)
    moved = gh.push_files(REPO, "main", {"docs/new.md": "news\n" * 100}, "base moves")
    assert repo.branch_head("main") == moved
    before = len(gh.effects)
    merge = commit_files(repo, first, {"docs/new.md": b"news\n" * 100}, "merge main\n",
                         parents=(moved,))
    landed = repo.advance_branch(BRANCH, merge, first)
    assert [c.parents for c in gh.commits(REPO, BRANCH)[:1]] == [(first, moved)]
    assert not [e for e in gh.effects[before:] if ":blob-created:" in e]
    assert verified(gh, landed)


def test_someone_elses_push_refuses_the_ref_update_as_a_push_rejected(gh: FakeGitHub,
                                                                       tmp_path: Path) -> None:
    repo = api_mirror(gh, tmp_path / "work")
    base = repo.branch_head("main")
    assert base is not None
    first = repo.advance_branch(BRANCH, commit_files(repo, base, {"a": b"1\n"}, "one\n"), base)
    gh.push_files(REPO, BRANCH, {"human.txt": "mine\n"}, "a human's commit")
    with pytest.raises(WorkspaceError) as caught:
        repo.advance_branch(BRANCH, commit_files(repo, first, {"b": b"2\n"}, "two\n"), first)
    assert caught.value.code == "push_rejected"
    assert caught.value.retry_class is RetryClass.AUTO_RETRY
    assert gh.commits(REPO, BRANCH)[0].subject == "a human's commit"


@pytest.mark.parametrize("via", ["api", "git"])
def test_changing_a_workflow_without_the_permission_is_refused_for_a_human(
        gh: FakeGitHub, tmp_path: Path, via: str) -> None:
    gh.installations[1].permissions.pop("workflows", None)
    repo = api_mirror(gh, tmp_path / "work")
    base = repo.branch_head("main")
    assert base is not None
    if via == "git":
        repo.api = None
        repo.create_branch(BRANCH, base)  # the engine's first step: the branch, locally
    change = commit_files(repo, base, {WORKFLOW: b"on: [push, pull_request]\n"}, "ci\n")
    with pytest.raises(WorkspaceError) as caught:
        repo.advance_branch(BRANCH, change, base)
    assert caught.value.code == WORKFLOW_PERMISSION
    assert caught.value.retry_class is RetryClass.NEEDS_HUMAN
    if via == "git":  # the push is refused
        assert f"`{WORKFLOW}` without `workflows` permission" in caught.value.message
    else:  # GitHub refuses the Git Data API at the tree already
        assert caught.value.message == (
            "GitHub refused the commit's tree (403 Resource not accessible by integration): it "
            f"creates or changes workflow files ({WORKFLOW}), and the App has no "
            "`workflows: write` permission")
        assert [r.status for r in gh.requests_to("POST", r"/git/trees$")] == [403]
        assert not gh.requests_to("POST", r"/git/commits$")
    assert "`workflows: write`" in caught.value.hint
    assert gh.branch_head(REPO, BRANCH) is None


@pytest.mark.parametrize("status", [403, 404])
def test_a_tree_refused_for_its_workflow_files_reads_as_the_workflows_refusal(
        gh: FakeGitHub, tmp_path: Path, status: int) -> None:
    """GitHub answers 403 or 404 to the tree; with workflow paths in it that is the missing
    `workflows` permission (which the base-merge gate explains), never a do-not-retry 403."""
    gh.installations[1].permissions.pop("workflows", None)
    if status == 404:
        gh.fail("POST", r"/git/trees$", 404, body={"message": "Not Found"})
    repo = api_mirror(gh, tmp_path / "work")
    base = repo.branch_head("main")
    assert base is not None
    change = commit_files(repo, base, {WORKFLOW: None, "src/a.py": b"x = 5\n"}, "drop ci\n")
    with pytest.raises(WorkspaceError) as caught:
        repo.advance_branch(BRANCH, change, base)
    assert caught.value.code == WORKFLOW_PERMISSION
    assert f"{status} " in caught.value.message and WORKFLOW in caught.value.message


def test_a_tree_without_workflow_files_refused_403_stays_a_permission_error(
        gh: FakeGitHub, tmp_path: Path) -> None:
    gh.installations[1].permissions.pop("workflows", None)
    gh.fail("POST", r"/git/trees$", 403, body={"message": "Resource not accessible by integration"})
    repo = api_mirror(gh, tmp_path / "work")
    base = repo.branch_head("main")
    assert base is not None
    with pytest.raises(ForgeError) as caught:
        repo.advance_branch(BRANCH, commit_files(repo, base, {"b": b"2\n"}, "two\n"), base)
    assert caught.value.code == "github_403"


def test_with_the_workflows_permission_a_workflow_change_lands(gh: FakeGitHub,
                                                               tmp_path: Path) -> None:
    gh.installations[1].permissions["workflows"] = "write"
    repo = api_mirror(gh, tmp_path / "work")
    base = repo.branch_head("main")
    assert base is not None
    change = commit_files(repo, base, {WORKFLOW: b"on: [push, pull_request]\n"}, "ci\n")
    landed = repo.advance_branch(BRANCH, change, base)
    assert gh.branch_head(REPO, BRANCH) == landed


def test_a_file_over_githubs_size_limit_is_refused_before_anything_is_sent(
        gh: FakeGitHub, tmp_path: Path) -> None:
    repo = api_mirror(gh, tmp_path / "work")
    base = repo.branch_head("main")
    assert base is not None
    huge = b"\0" * (100 * 1024 * 1024 + 1)  # GitHub refuses one file over 100 MiB
    change = commit_files(repo, base, {"data/big.bin": huge, "src/a.py": b"x = 7\n"}, "big\n")
    before = len(gh.requests)
    with pytest.raises(WorkspaceError) as caught:
        repo.advance_branch(BRANCH, change, base)
    assert caught.value.code == "blob_too_large"
    assert caught.value.message == ("the commit holds files over GitHub's limit of 100 MiB a "
                                    "file: data/big.bin (100.0 MiB); nothing was sent")
    assert "Git LFS" in caught.value.hint
    assert not [r for r in gh.requests[before:] if r.method == "POST"]
