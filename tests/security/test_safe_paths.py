"""Only regular files inside the worktree are read or written, and staging treats files as data."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from jobs.adapters.safe_paths import (
    Kind,
    UnsafePathError,
    check_new_path,
    kind_of,
    read_regular,
    require_regular,
    write_regular,
)
from jobs.adapters.workspace import Repository, Worktree
from tests.kit.repos import make_repo


@pytest.fixture
def root(tmp_path: Path) -> Path:
    tree = tmp_path / "tree"
    (tree / "src").mkdir(parents=True)
    (tree / "src" / "ok.py").write_text("ok\n")
    (tmp_path / "outside.py").write_text("outside\n")
    os.symlink(tmp_path / "outside.py", tree / "src" / "abs.py")
    os.symlink("ok.py", tree / "src" / "rel.py")
    os.symlink(tmp_path, tree / "linked_dir")
    os.mkfifo(tree / "src" / "pipe.py")
    return tree


def test_a_regular_file_is_read_and_written(root: Path) -> None:
    assert read_regular(root, "src/ok.py") == b"ok\n"
    write_regular(root, "src/ok.py", b"new\n")
    assert (root / "src" / "ok.py").read_text() == "new\n"
    assert kind_of(root, "src/ok.py") is Kind.REGULAR


@pytest.mark.parametrize(("path", "reason"), [
    ("src/abs.py", "symbolic link"),
    ("src/rel.py", "symbolic link"),
    ("linked_dir/outside.py", "parent `linked_dir` is a symlink"),
    ("src/pipe.py", "not a regular file"),
    ("src", "directory"),
    ("../outside.py", "leaves the repository root"),
    (".git/config", "points into a `.git`"),
    ("src/missing.py", "does not exist"),
])
def test_anything_else_is_refused_naming_the_path(root: Path, path: str, reason: str) -> None:
    for action in (lambda: read_regular(root, path), lambda: write_regular(root, path, b"x"),
                   lambda: require_regular(root, path)):
        with pytest.raises(UnsafePathError) as caught:
            action()
        assert f"`{path}`" in caught.value.message and reason in caught.value.message
        assert caught.value.code == "unsafe_path" and caught.value.hint
    assert (root.parent / "outside.py").read_text() == "outside\n"


def test_new_paths_may_not_sit_behind_a_link(root: Path) -> None:
    check_new_path(root, "src/new.py")
    check_new_path(root, "brand/new/dir.py")
    for path in ("linked_dir/new.py", "src/ok.py", "src/abs.py"):
        with pytest.raises(UnsafePathError):
            check_new_path(root, path)


def test_kinds_are_seen_without_following_links(root: Path) -> None:
    assert kind_of(root, "src/abs.py") is Kind.SYMLINK
    assert kind_of(root, "src/pipe.py") is Kind.SPECIAL
    assert kind_of(root, "linked_dir/outside.py") is Kind.MISSING  # as git sees it
    assert kind_of(root, "nope.py") is Kind.MISSING


@pytest.fixture
def worktree(tmp_path: Path) -> Worktree:
    repo = make_repo(tmp_path / "repo", {"src/app.py": "x = 1\n", ".gitignore": "*.log\n"})
    head = Repository(repo).resolve("HEAD")
    assert head is not None
    return Repository(repo).open_worktree(tmp_path / "wt", head)


def test_a_link_a_command_left_is_staged_as_a_link_never_followed(worktree: Worktree,
                                                                 tmp_path: Path) -> None:
    (tmp_path / "secret").write_text("do not read\n")
    os.symlink(tmp_path / "secret", worktree.path / "src" / "leak.py")
    worktree.stage_all()
    diff = worktree.staged_diff()
    assert "new file mode 120000" in diff and "do not read" not in diff


def test_a_special_file_or_a_nested_repository_stops_staging(worktree: Worktree) -> None:
    (worktree.path / "src" / "app.py").unlink()  # a tracked file replaced by a fifo
    os.mkfifo(worktree.path / "src" / "app.py")
    os.mkfifo(worktree.path / "src" / "new_pipe")  # an untracked one git never lists
    with pytest.raises(UnsafePathError, match=re.escape("src/app.py")):
        worktree.stage_all()
    worktree.reset(worktree.head)
    nested = worktree.path / "vendor" / ".git"
    nested.mkdir(parents=True)
    (nested / "HEAD").write_text("ref: refs/heads/main\n")
    (nested / "objects").mkdir()
    (nested / "refs").mkdir()
    with pytest.raises(UnsafePathError, match="vendor/"):
        worktree.stage_all()


def test_a_reset_removes_ignored_files_and_planted_git_entries(worktree: Worktree) -> None:
    (worktree.path / "build.log").write_text("ignored output\n")
    (worktree.path / "cache").mkdir()
    (worktree.path / "cache" / "x.log").write_text("ignored\n")
    (worktree.path / ".git").write_text("gitdir: /somewhere\n")
    (worktree.path / "src" / ".GIT").mkdir()  # in a tracked directory, which git's clean skips
    (worktree.path / "src" / ".GIT" / "config").write_text("[core]\n")
    (worktree.path / "src" / "app.py").write_text("changed\n")
    before = worktree.resets
    worktree.reset(worktree.head)
    assert sorted(p.name for p in worktree.path.iterdir()) == [".gitignore", "src"]
    assert (worktree.path / "src" / "app.py").read_text() == "x = 1\n"
    assert sorted(p.name for p in (worktree.path / "src").iterdir()) == ["app.py"]
    assert worktree.resets == before + 1


def test_a_reset_never_writes_through_links_a_command_left(worktree: Worktree,
                                                           tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "victim").write_text("victim\n")
    shutil.rmtree(worktree.path / "src")
    os.symlink(outside, worktree.path / "src")  # a tracked directory replaced by a link
    (worktree.path / ".gitignore").unlink()
    os.symlink(outside / "victim", worktree.path / ".gitignore")  # a tracked file, likewise
    worktree.reset(worktree.head)
    assert sorted(os.listdir(outside)) == ["victim"]
    assert (outside / "victim").read_text() == "victim\n"
    assert not (worktree.path / "src").is_symlink()
    assert (worktree.path / "src" / "app.py").read_text() == "x = 1\n"
    assert (worktree.path / ".gitignore").read_text() == "*.log\n"
