"""Git behind jobs.adapters.workspace, on real repositories; the user's checkout is never touched."""

from __future__ import annotations

from pathlib import Path

import pytest

from jobs.adapters.workspace import BOT_EMAIL, BOT_NAME, CommitInfo, Repository
from jobs.basics.errors import WorkspaceError
from tests.conftest import RepoFactory
from tests.kit.repos import commit_all, git, write_files

FILES: dict[str, str | bytes] = {
    "README.md": "# demo\n",
    "src/app.py": "print('hi')\n",
    "src/no_newline.py": "x = 1",
    "src/empty.py": "",
    "src/café ünï.py": "s = 'ü'\n",
    "docs/with space.md": "hello world\n",
    "data/blob.bin": b"\x00\x01\x02\xffbinary",
    "data/latin1.txt": "caf\xe9\n".encode("latin-1"),
}


@pytest.fixture
def repo_path(repo_factory: RepoFactory) -> Path:
    return repo_factory(FILES)


@pytest.fixture
def repo(repo_path: Path) -> Repository:
    return Repository(repo_path)


def head(path: Path) -> str:
    return git(path, "rev-parse", "HEAD")


# --- Repository ----------------------------------------------------------------------------


def test_non_repository_is_refused(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(WorkspaceError) as caught:
        Repository(plain)
    assert caught.value.code == "not_a_repository"
    assert "not inside a git repository" in caught.value.message
    assert "git init" in caught.value.hint


def test_missing_path_is_refused(tmp_path: Path) -> None:
    with pytest.raises(WorkspaceError) as caught:
        Repository(tmp_path / "nowhere")
    assert caught.value.code == "not_a_repository"


def test_repository_from_a_subdirectory_finds_the_root(repo_path: Path) -> None:
    repo = Repository(repo_path / "src")
    assert repo.root == repo_path.resolve()
    assert repo.git_dir == (repo_path / ".git").resolve()
    assert repo.state_dir == repo.git_dir / "stepwise"


def test_refs_branches_and_ancestry(repo: Repository, repo_path: Path) -> None:
    first = head(repo_path)
    write_files(repo_path, {"src/app.py": "print('bye')\n"})
    second = commit_all(repo_path, "second")
    assert repo.current_branch() == "main"
    assert repo.resolve("HEAD") == second
    assert repo.resolve("HEAD~1") == first
    assert repo.resolve("no-such-ref") is None
    assert repo.branch_head("main") == second
    assert repo.branch_head("nope") is None
    assert repo.is_ancestor(first, second)
    assert not repo.is_ancestor(second, first)
    git(repo_path, "checkout", "-q", "--detach", first)
    assert repo.current_branch() is None


def test_tracked_files_with_non_ascii_and_spaces(repo: Repository, repo_path: Path) -> None:
    assert sorted(repo.tracked_files(head(repo_path))) == sorted(FILES)


def test_read_texts(repo: Repository, repo_path: Path) -> None:
    wanted = ["src/app.py", "data/blob.bin", "src/missing.py", "src/no_newline.py", "src/empty.py",
              "src/café ünï.py", "docs/with space.md", "data/latin1.txt", "README.md"]
    texts = repo.read_texts(head(repo_path), wanted)
    assert list(texts) == wanted
    assert texts == {
        "src/app.py": "print('hi')\n",
        "data/blob.bin": None,
        "src/missing.py": None,
        "src/no_newline.py": "x = 1",
        "src/empty.py": "",
        "src/café ünï.py": "s = 'ü'\n",
        "docs/with space.md": "hello world\n",
        "data/latin1.txt": None,
        "README.md": "# demo\n",
    }
    assert repo.read_texts(head(repo_path), []) == {}
    assert repo.show_file(head(repo_path), "src/no_newline.py") == "x = 1"
    assert repo.show_file(head(repo_path), "nope.py") is None


def test_read_texts_at_an_older_commit(repo: Repository, repo_path: Path) -> None:
    first = head(repo_path)
    write_files(repo_path, {"src/app.py": "changed\n", "src/new.py": "new\n"})
    second = commit_all(repo_path, "change")
    assert repo.read_texts(first, ["src/app.py", "src/new.py"]) == {
        "src/app.py": "print('hi')\n", "src/new.py": None}
    assert repo.read_texts(second, ["src/app.py", "src/new.py"]) == {
        "src/app.py": "changed\n", "src/new.py": "new\n"}


def test_read_texts_missing_path_with_a_space(repo: Repository, repo_path: Path) -> None:
    texts = repo.read_texts(head(repo_path), ["docs/gone away.md", "README.md"])
    assert texts == {"docs/gone away.md": None, "README.md": "# demo\n"}


def test_read_texts_path_with_a_newline(repo_factory: RepoFactory) -> None:
    files: dict[str, str | bytes] = {"a\nb.py": "first\n", "c.py": "second\n", "d.py": "third\n"}
    path = repo_factory(files)
    repo = Repository(path)
    names = repo.tracked_files(head(path))
    assert sorted(names) == sorted(files)
    # today: {"a\nb.py": None, "c.py": None, "d.py": "second\n"} -- d.py gets c.py's content
    assert repo.read_texts(head(path), ["a\nb.py", "c.py", "d.py"]) == files


def test_create_branch_refuses_an_existing_branch(repo: Repository, repo_path: Path) -> None:
    base = head(repo_path)
    repo.create_branch("stepwise/issue-1", base)
    assert repo.branch_head("stepwise/issue-1") == base
    write_files(repo_path, {"README.md": "# two\n"})
    newer = commit_all(repo_path, "two")
    with pytest.raises(WorkspaceError):
        repo.create_branch("stepwise/issue-1", newer)
    assert repo.branch_head("stepwise/issue-1") == base
    with pytest.raises(WorkspaceError):
        repo.create_branch("main", base)
    assert repo.branch_head("main") == newer


def test_advance_branch_is_compare_and_set(repo: Repository, repo_path: Path) -> None:
    base = head(repo_path)
    repo.create_branch("job", base)
    write_files(repo_path, {"README.md": "# two\n"})
    second = commit_all(repo_path, "two")
    write_files(repo_path, {"README.md": "# three\n"})
    third = commit_all(repo_path, "three")
    repo.advance_branch("job", second, base)
    assert repo.branch_head("job") == second
    # someone else's view of the old head: refused, and the ref stays where it was
    with pytest.raises(WorkspaceError):
        repo.advance_branch("job", third, base)
    assert repo.branch_head("job") == second
    repo.advance_branch("job", third, second)
    assert repo.branch_head("job") == third


def test_commits_parse_subject_body_trailers(repo: Repository, repo_path: Path) -> None:
    base = head(repo_path)
    write_files(repo_path, {"src/app.py": "one\n"})
    git(repo_path, "add", "-A")
    git(repo_path, "commit", "-q", "-m", "stepwise(#7): batch 1/2 — src/app.py",
        "-m", "Edited: 1 file.\nSecond line of the body.",
        "-m", "Stepwise-Job: 7-abc\nStepwise-Batch: 1\nStepwise-Milestone: 1")
    write_files(repo_path, {"README.md": "plain\n"})
    plain = commit_all(repo_path, "a plain commit")
    commits = repo.commits(base, plain)
    assert [c.subject for c in commits] == ["stepwise(#7): batch 1/2 — src/app.py",
                                           "a plain commit"]
    first, second = commits
    assert first.trailers == {"Stepwise-Job": "7-abc", "Stepwise-Batch": "1",
                              "Stepwise-Milestone": "1"}
    assert "Edited: 1 file.\nSecond line of the body." in first.body
    assert first.parents == (base,)
    assert first.sha == git(repo_path, "rev-parse", "HEAD~1")
    assert first.reverted_sha is None
    assert second.trailers == {}
    assert second.body == ""
    assert second.sha == plain
    assert second.parents == (first.sha,)
    assert repo.commits(plain, plain) == []


def test_reverted_sha_from_a_real_git_revert(repo: Repository, repo_path: Path) -> None:
    base = head(repo_path)
    write_files(repo_path, {"src/app.py": "one\n"})
    target = commit_all(repo_path, "change app")
    git(repo_path, "revert", "--no-edit", target)
    commits = repo.commits(base, head(repo_path))
    assert len(commits) == 2
    assert commits[0].reverted_sha is None
    assert commits[1].reverted_sha == target
    assert commits[1].subject == 'Revert "change app"'


def test_reverted_sha_parsing() -> None:
    info = CommitInfo(sha="x", parents=(), subject="Revert", trailers={},
                      body="Because.\n\nThis reverts commit abc123.\n")
    assert info.reverted_sha == "abc123"
    assert CommitInfo(sha="x", parents=(), subject="s", body="", trailers={}).reverted_sha is None


# --- worktrees -----------------------------------------------------------------------------


def test_open_worktree_twice_replaces_the_stale_one(repo: Repository, repo_path: Path,
                                                    tmp_path: Path) -> None:
    first = head(repo_path)
    write_files(repo_path, {"src/app.py": "two\n"})
    second = commit_all(repo_path, "two")
    where = tmp_path / "work" / "job-7"
    stale = repo.open_worktree(where, first)
    write_files(where, {"src/app.py": "half-done edit\n", "junk.txt": "left over\n"})
    fresh = repo.open_worktree(where, second)
    assert fresh.path == where
    assert fresh.head == second
    assert git(repo_path, "--git-dir", str(fresh.private), "rev-parse", "HEAD") == second
    assert (where / "src/app.py").read_text() == "two\n"
    assert not (where / "junk.txt").exists()
    fresh.stage_all()
    assert fresh.staged_paths() == []
    # no git metadata in the directory sandboxed commands see; HEAD and index live beside it
    assert not (where / ".git").exists()
    assert sorted(p.name for p in fresh.private.iterdir()) == ["HEAD", "commondir", "index",
                                                               "index.known"]
    assert str(where.resolve()) not in git(repo_path, "worktree", "list", "--porcelain")
    assert stale.path == fresh.path
    fresh.remove()
    assert not where.exists()
    assert not fresh.private.exists()


def test_worktree_commit_tree_commits_exactly_the_tree(repo: Repository, repo_path: Path,
                                                        tmp_path: Path) -> None:
    base = head(repo_path)
    tree = repo.open_worktree(tmp_path / "wt", base)
    write_files(tree.path, {"src/app.py": "print('edited')\n", "src/added.py": "new\n"})
    tree.stage_all()
    assert sorted(tree.staged_paths()) == ["src/added.py", "src/app.py"]
    diff = tree.staged_diff()
    assert "--- a/src/app.py" in diff
    assert "+print('edited')" in diff
    tree_sha = tree.write_tree()
    # a later, unstaged edit and a failing hook must not end up in (or stop) the commit
    write_files(tree.path, {"README.md": "# not validated\n"})
    hook = repo.git_dir / "hooks" / "pre-commit"
    hook.parent.mkdir(parents=True, exist_ok=True)
    hook.write_text("#!/bin/sh\nexit 1\n")
    hook.chmod(0o755)
    message = "stepwise(#7): batch 1/1 — src/app.py\n\nStepwise-Job: 7-abc\nStepwise-Batch: 1\n"
    commit = tree.commit_tree(tree_sha, base, message)
    assert git(repo_path, "rev-parse", f"{commit}^{{tree}}") == tree_sha
    assert git(repo_path, "rev-list", "--parents", "-n", "1", commit).split() == [commit, base]
    assert git(repo_path, "log", "-1", "--format=%an <%ae>|%cn <%ce>", commit) == (
        f"{BOT_NAME} <{BOT_EMAIL}>|{BOT_NAME} <{BOT_EMAIL}>")
    assert git(repo_path, "log", "-1", "--format=%B", commit) == message.strip()
    assert git(repo_path, "show", f"{commit}:README.md") == "# demo"
    assert git(repo_path, "show", f"{commit}:src/added.py") == "new"
    # commit-tree moves no ref: the worktree and branches stay where they were
    assert tree.head == base
    assert repo.branch_head("main") == base
    tree.stage_all()
    assert sorted(tree.staged_paths()) == ["README.md", "src/added.py", "src/app.py"]
    tree.reset(base)
    tree.stage_all()
    assert tree.staged_paths() == []
    assert not (tree.path / "src/added.py").exists()


def test_users_checkout_is_untouched(repo: Repository, repo_path: Path, tmp_path: Path) -> None:
    # a user mid-work: a staged change, an unstaged change and an untracked file
    write_files(repo_path, {"README.md": "# staged\n"})
    git(repo_path, "add", "README.md")
    write_files(repo_path, {"src/app.py": "print('unstaged')\n", "scratch.txt": "mine\n"})

    def checkout_state() -> tuple[str, ...]:
        return (
            git(repo_path, "symbolic-ref", "HEAD"),
            git(repo_path, "rev-parse", "HEAD"),
            git(repo_path, "status", "--porcelain=v1", "--untracked-files=all"),
            git(repo_path, "diff", "--cached"),
            git(repo_path, "diff"),
            (repo_path / "scratch.txt").read_text(),
            git(repo_path, "stash", "list"),
        )

    before = checkout_state()
    base = head(repo_path)
    repo.tracked_files(base)
    repo.read_texts(base, list(FILES))
    repo.create_branch("stepwise/issue-7", base)
    tree = repo.open_worktree(tmp_path / "wt", base)
    write_files(tree.path, {"src/app.py": "print('bot')\n"})
    tree.stage_all()
    commit = tree.commit_tree(tree.write_tree(), base, "bot commit\n")
    repo.advance_branch("stepwise/issue-7", commit, base)
    repo.commits(base, commit)
    tree.checkout(commit)
    tree.reset(base)
    repo.open_worktree(tmp_path / "wt", commit).remove()
    assert checkout_state() == before
    assert repo.branch_head("main") == base
    assert repo.branch_head("stepwise/issue-7") == commit
