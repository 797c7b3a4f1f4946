"""Trees a repository shaped (a job's worktree, a clone holding job worktrees) are removed by
Stepwise outside the sandbox without recursion and without following a link
(jobs/adapters/tree_fd.py: `discard`, `remove_tree`): a hostile repository leaves a chain of
directories deeper than PATH_MAX and than Python's stack, which `shutil.rmtree` failed on."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.server import uninstall_files
from jobs.adapters import tree_fd
from jobs.adapters.workspace import Repository
from tests.kit.repos import git, make_repo

DEPTH = 3_000


@pytest.fixture(autouse=True)
def no_chain_left(tmp_path: Path) -> Iterator[None]:
    """Whatever the test leaves goes without recursion: pytest's own clean-up of old temporary
    folders is `shutil.rmtree` (a chain left by a failure would break every later session)."""
    yield
    for entry in list(tmp_path.iterdir()):
        tree_fd.discard(entry)


def deep_chain(where: Path, depth: int = DEPTH) -> None:
    """`where/d/d/...` `depth` directories deep, a file at the bottom (made by descriptors:
    the path is longer than PATH_MAX)."""
    where.mkdir(parents=True, exist_ok=True)
    fd = os.open(where, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(depth):
            os.mkdir("d", dir_fd=fd)
            deeper = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = deeper
        os.close(os.open("bottom", os.O_WRONLY | os.O_CREAT, 0o600, dir_fd=fd))
    finally:
        os.close(fd)


def test_a_stale_worktree_with_a_deep_chain_is_replaced(tmp_path: Path) -> None:
    origin = make_repo(tmp_path / "clone", {"README.md": "# demo\n"})
    head = git(origin, "rev-parse", "HEAD")
    path = tmp_path / "worktrees" / "issue-1"
    first = Repository(origin).open_worktree(path, head)
    deep_chain(first.path / "build")  # left by a command that wrote through
    deep_chain(path.with_name("issue-1.git") / "scratch")
    fresh = Repository(origin).open_worktree(path, head)
    try:
        assert sorted(os.listdir(fresh.path)) == ["README.md"]
        assert not (path.with_name("issue-1.git") / "scratch").exists()
    finally:
        fresh.remove()


def test_an_uninstall_deletes_a_clone_holding_a_deep_chain(tmp_path: Path) -> None:
    clone = tmp_path / "repos" / "octo" / "demo.git"
    deep_chain(clone / "stepwise" / "worktrees" / "issue-1")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("kept")
    os.symlink(outside, clone / "stepwise" / "link")  # never followed
    assert uninstall_files.delete([clone], why="test") == [clone]
    assert not clone.exists()
    assert (outside / "keep.txt").read_text() == "kept"


def test_discard_takes_a_link_and_leaves_its_target(tmp_path: Path) -> None:
    target = tmp_path / "target"
    deep_chain(target, 3)
    os.symlink(target, tmp_path / "link")
    tree_fd.discard(tmp_path / "link")
    tree_fd.discard(tmp_path / "missing")
    assert not os.path.lexists(tmp_path / "link") and (target / "d" / "d" / "d" / "bottom").exists()
