"""What a worktree knows of its own index: the shortcuts say exactly what git would have said.

The combined staged read gives git's own diff and paths, a tree Stepwise wrote is read from the
bytes it staged, and a reset that skips `diff-index` (the index is the tree Stepwise's last
write left) still undoes every file, planted `.git`, fifo and index change made behind its back.
"""

from __future__ import annotations

import os
import subprocess
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from jobs.adapters.index_state import parse_patch_with_raw
from jobs.adapters.workspace import Repository, Worktree
from tests.conftest import RepoFactory
from tests.jobs.adapters.test_worktree_reset import FILES, fresh, manifest
from tests.kit.repos import git

PLAIN_DIFF = ("-c", "core.quotepath=false", "diff", "--cached", "-M", "--no-color",
              "--no-ext-diff", "--no-textconv", "--src-prefix=a/", "--dst-prefix=b/")


@pytest.fixture
def repo_path(repo_factory: RepoFactory) -> Path:
    return repo_factory({**FILES, "docs/long.md": "".join(f"line {n}\n" for n in range(40)),
                         "naïve file.txt": "accent\n"})


@contextmanager
def git_calls() -> Iterator[Counter[str]]:
    """The git subcommands started while the block runs."""
    counts: Counter[str] = Counter()
    real = subprocess.Popen.__init__

    def popen(self: Any, argv: Any, *args: Any, **kwargs: Any) -> None:
        if isinstance(argv, list) and argv and argv[0] == "git":
            rest = argv[1:]
            while rest and (rest[0].startswith("--") or rest[0] == "-c"):
                rest = rest[2:] if rest[0] == "-c" else rest[1:]
            counts[rest[0]] += 1
        real(self, argv, *args, **kwargs)

    subprocess.Popen.__init__ = popen  # type: ignore[method-assign]
    try:
        yield counts
    finally:
        subprocess.Popen.__init__ = real  # type: ignore[method-assign]


def edit(where: Path) -> None:
    (where / "src/app.py").write_text("print('changed')\n")
    (where / "docs/long.md").rename(where / "docs/moved.md")  # a rename for -M
    (where / "naïve file.txt").write_text("accent changed\n")
    (where / "tool.sh").chmod(0o755)  # a mode change
    (where / "src/deep/other.py").unlink()
    (where / "src/new one.py").write_text("NEW = 1\n")


def test_one_staged_read_gives_gits_own_diff_and_paths(repo_path: Path, tmp_path: Path) -> None:
    repo = Repository(repo_path)
    sha = git(repo_path, "rev-parse", "HEAD")
    wt = repo.open_worktree(tmp_path / "wt" / "issue-1", sha, keep=True)
    edit(wt.path)
    wt.stage_all()
    with git_calls() as calls:
        paths, diff = wt.staged_paths(), wt.staged_diff()
    assert calls["diff"] == 1 and sum(calls.values()) == 1
    plain = wt.git(*PLAIN_DIFF, sha)
    names = wt.git("-c", "core.quotepath=false", "diff-index", "--cached", "--name-only", "-z",
                   "--no-renames", sha)
    assert diff == plain and "rename from docs/long.md" in diff
    assert paths == sorted(name for name in names.split("\0") if name)
    assert "docs/long.md" in paths and "docs/moved.md" in paths and "naïve file.txt" in paths


def test_nothing_staged_reads_as_no_paths_and_an_empty_diff() -> None:
    assert parse_patch_with_raw(b"") == ([], b"")


def test_a_written_tree_is_read_from_the_staged_bytes_as_git_would(
        repo_path: Path, tmp_path: Path) -> None:
    repo = Repository(repo_path)
    sha = git(repo_path, "rev-parse", "HEAD")
    wt = repo.open_worktree(tmp_path / "wt" / "issue-2", sha, keep=True)
    edit(wt.path)
    (wt.path / "src/blob.bin").write_bytes(b"\0\1binary")
    wt.stage_all()
    tree = wt.write_tree()
    wanted = ["src/app.py", "src/deep/other.py", "naïve file.txt", "README.md", "src/blob.bin",
              "docs/moved.md", "absent.txt"]
    with git_calls() as calls:
        known = repo.read_texts(tree, wanted)
    # The unchanged files come from the base, through the long-lived reader that built the tree.
    assert sum(calls.values()) == 0
    assert known == Repository(repo_path).read_texts(tree, wanted)  # a repository that knows nothing
    assert known["src/app.py"] == "print('changed')\n" and known["src/deep/other.py"] is None
    assert known["src/blob.bin"] is None


def reset_after_a_commit(repo: Repository, repo_path: Path, where: Path) -> tuple[Worktree, str]:
    """A worktree that committed a batch: its index is the commit's tree, as Stepwise wrote it."""
    sha = git(repo_path, "rev-parse", "HEAD")
    wt = repo.open_worktree(where, sha, keep=True)
    (wt.path / "src/app.py").write_text("print('batch')\n")
    wt.stage_all()
    commit = wt.commit_tree(wt.write_tree(), sha, "batch\n")
    return wt, commit


def test_a_reset_to_the_tree_the_index_holds_skips_the_diff_and_still_cleans(
        repo_path: Path, tmp_path: Path) -> None:
    repo = Repository(repo_path)
    wt, commit = reset_after_a_commit(repo, repo_path, tmp_path / "wt" / "issue-3")
    where = wt.path
    (where / "README.md").write_text("changed behind its back\n")
    (where / "src/deep/.git").mkdir()
    (where / "src/deep/.git/config").write_text("[core]\n\tfsmonitor = evil\n")
    (where / "vendored/.git").mkdir(parents=True)
    os.mkfifo(where / "src/pipe")
    (where / "notes.txt").write_text("untracked\n")
    with git_calls() as calls:
        wt.reset(commit)
    assert calls["diff-index"] == 0
    assert manifest(where) == fresh(repo, commit, tmp_path / "fresh")


def test_an_index_changed_behind_the_worktrees_back_is_diffed_again(
        repo_path: Path, tmp_path: Path) -> None:
    repo = Repository(repo_path)
    wt, commit = reset_after_a_commit(repo, repo_path, tmp_path / "wt" / "issue-4")
    (wt.path / "notes.txt").write_text("staged behind its back\n")
    env = {**os.environ, "GIT_DIR": str(wt.private), "GIT_WORK_TREE": str(wt.path)}
    subprocess.run(["git", "add", "notes.txt"], cwd=wt.path, env=env, check=True)
    (wt.path / "notes.txt").unlink()  # only the index says it now
    with git_calls() as calls:
        wt.reset(commit)
    assert calls["diff-index"] == 1
    assert wt.staged_paths() == []
    assert manifest(wt.path) == fresh(repo, commit, tmp_path / "fresh")


def test_a_git_call_through_the_worktree_makes_the_index_unknown(
        repo_path: Path, tmp_path: Path) -> None:
    repo = Repository(repo_path)
    wt, commit = reset_after_a_commit(repo, repo_path, tmp_path / "wt" / "issue-5")
    (wt.path / "extra.txt").write_text("x\n")
    wt.git("update-index", "--add", "extra.txt")  # any command may change the index
    with git_calls() as calls:
        wt.reset(commit)
    assert calls["diff-index"] == 1
    assert not (wt.path / "extra.txt").exists() and wt.staged_paths() == []


def test_the_next_process_trusts_what_the_index_holds_only_while_it_is_unchanged(
        repo_path: Path, tmp_path: Path) -> None:
    where = tmp_path / "wt" / "issue-6"
    wt, commit = reset_after_a_commit(Repository(repo_path), repo_path, where)
    (where / "README.md").write_text("changed behind its back\n")
    later = Repository(repo_path).open_worktree(where, commit, keep=True)  # another process
    with git_calls() as calls:
        later.reset(commit)
    assert calls["diff-index"] == 0
    assert manifest(where) == fresh(Repository(repo_path), commit, tmp_path / "fresh")
    env = {**os.environ, "GIT_DIR": str(wt.private), "GIT_WORK_TREE": str(where)}
    (where / "planted.txt").write_text("x\n")
    subprocess.run(["git", "add", "planted.txt"], cwd=where, env=env, check=True)
    (where / "planted.txt").unlink()
    again = Repository(repo_path).open_worktree(where, commit, keep=True)
    with git_calls() as calls:
        again.reset(commit)
    assert calls["diff-index"] == 1 and again.staged_paths() == []
    assert manifest(where) == fresh(Repository(repo_path), commit, tmp_path / "fresh2")
