"""A kept worktree reset to a commit: exactly what a fresh checkout has, at the cost of what changed.

Each test leaves a worktree the way a hostile or careless sandboxed command could (edits that
keep the mtime, modes, links, planted `.git`, ignored and untracked files, a staged attempt),
resets it, and compares every entry with a fresh checkout of the same commit.
"""

from __future__ import annotations

import dataclasses
import os
import stat
from pathlib import Path

import pytest

from jobs.adapters.workspace import Repository
from tests.conftest import RepoFactory
from tests.kit.repos import commit_all, git, write_files

FILES: dict[str, str | bytes] = {
    "README.md": "# demo\n",
    ".gitignore": "build/\n*.pyc\n",
    "src/app.py": "print('hi')\n",
    "src/deep/mod.py": "VALUE = 1\n",
    "src/deep/other.py": "OTHER = 2\n",
    "tool.sh": "#!/bin/sh\necho tool\n",
}


@pytest.fixture
def repo_path(repo_factory: RepoFactory) -> Path:
    path = repo_factory(FILES)
    git(path, "update-index", "--chmod=+x", "tool.sh")
    git(path, "commit", "-q", "-m", "executable tool")
    return path


@pytest.fixture
def repo(repo_path: Path) -> Repository:
    return Repository(repo_path)


def manifest(root: Path) -> dict[str, tuple[str, int, bytes]]:
    """Every entry under `root`: its kind, permission bits (files) and content or link text."""
    entries: dict[str, tuple[str, int, bytes]] = {}
    for directory, dirs, files in os.walk(root, followlinks=False):
        for name in [*dirs, *files]:
            path = Path(directory, name)
            rel = str(path.relative_to(root))
            info = path.lstat()
            if stat.S_ISLNK(info.st_mode):
                entries[rel] = ("link", 0, os.readlink(path).encode())
            elif stat.S_ISDIR(info.st_mode):
                entries[rel] = ("dir", 0, b"")
            elif stat.S_ISREG(info.st_mode):
                entries[rel] = ("file", info.st_mode & 0o111, path.read_bytes())
            else:
                entries[rel] = ("special", 0, b"")
    return entries


def fresh(repo: Repository, sha: str, where: Path) -> dict[str, tuple[str, int, bytes]]:
    worktree = repo.open_worktree(where, sha)
    try:
        return manifest(worktree.path)
    finally:
        worktree.remove()


def head(path: Path) -> str:
    return git(path, "rev-parse", "HEAD")


def test_kept_worktree_undoes_what_a_command_left(repo: Repository, repo_path: Path,
                                                  tmp_path: Path) -> None:
    sha = head(repo_path)
    where = tmp_path / "wt" / "issue-1"
    kept = repo.open_worktree(where, sha, keep=True)
    app = where / "src/app.py"
    before = app.stat()
    app.write_text("print('HI')\n")  # same size, and the mtime put back: only ctime tells
    os.utime(app, ns=(before.st_atime_ns, before.st_mtime_ns))
    (where / "src/deep/mod.py").chmod(0o755)
    (where / "tool.sh").chmod(0o644)
    (where / "src/deep/other.py").unlink()
    (where / "README.md").unlink()
    (where / "README.md").symlink_to("/etc/passwd")
    (where / "build/out").mkdir(parents=True)  # ignored
    (where / "build/out/x.o").write_bytes(b"\0")
    (where / "src/cache.pyc").write_bytes(b"pyc")  # ignored file in a tracked directory
    (where / "notes.txt").write_text("untracked\n")
    (where / "empty/inner").mkdir(parents=True)
    (where / "src/deep/.git").mkdir()  # planted in a tracked directory: git never sees it
    (where / "src/deep/.git/config").write_text("[core]\n\tfsmonitor = evil\n")
    (where / ".GIT").write_text("gitdir: /elsewhere\n")
    (where / "vendored/.git").mkdir(parents=True)  # an untracked nested repository
    (where / "vendored/.git/HEAD").write_text("ref: refs/heads/main\n")
    os.mkfifo(where / "src/pipe")
    kept.reset(sha)
    assert manifest(where) == fresh(repo, sha, tmp_path / "fresh")
    assert manifest(where)["tool.sh"][1] == 0o111


def test_a_link_in_place_of_a_directory_is_replaced_and_its_target_untouched(
        repo: Repository, repo_path: Path, tmp_path: Path) -> None:
    sha = head(repo_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "mod.py").write_text("secret\n")
    (outside / "keep.txt").write_text("keep\n")
    where = tmp_path / "wt" / "issue-2"
    kept = repo.open_worktree(where, sha, keep=True)
    for entry in (where / "src/deep").iterdir():
        entry.unlink()
    (where / "src/deep").rmdir()
    (where / "src/deep").symlink_to(outside)
    kept.reset(sha)
    assert manifest(where) == fresh(repo, sha, tmp_path / "fresh")
    assert manifest(outside) == {"mod.py": ("file", 0, b"secret\n"),
                                 "keep.txt": ("file", 0, b"keep\n")}


def test_a_staged_attempt_and_a_file_turned_directory_are_undone(
        repo: Repository, repo_path: Path, tmp_path: Path) -> None:
    sha = head(repo_path)
    where = tmp_path / "wt" / "issue-3"
    kept = repo.open_worktree(where, sha, keep=True)
    write_files(where, {"src/app.py": "edited\n", "src/new.py": "new\n"})
    kept.stage_all()
    assert sorted(kept.staged_paths()) == ["src/app.py", "src/new.py"]
    (where / "src/deep/mod.py").unlink()
    (where / "src/deep/mod.py").mkdir()
    (where / "src/deep/mod.py/inside.py").write_text("x\n")
    kept.reset(sha)
    assert kept.staged_paths() == []
    assert manifest(where) == fresh(repo, sha, tmp_path / "fresh")


def test_a_kept_worktree_is_reused_and_moves_to_a_new_head(repo: Repository, repo_path: Path,
                                                           tmp_path: Path) -> None:
    first = head(repo_path)
    where = tmp_path / "wt" / "issue-4"
    repo.open_worktree(where, first, keep=True)
    os.link(where / "src/deep/other.py", tmp_path / "other-link")  # the same file, or not
    write_files(repo_path, {"src/app.py": "two\n", "src/added.py": "added\n"})
    git(repo_path, "rm", "-q", "src/deep/mod.py")
    second = commit_all(repo_path, "two")
    (where / "leftover.txt").write_text("from the last step\n")
    again = repo.open_worktree(where, second, keep=True)
    assert again.head == second
    assert (where / "src/deep/other.py").stat().st_nlink == 2  # not checked out again
    assert git(repo_path, "--git-dir", str(again.private), "rev-parse", "HEAD") == second
    assert manifest(where) == fresh(repo, second, tmp_path / "fresh")
    assert again.staged_paths() == []


@pytest.mark.parametrize("damage", ["no index", "foreign commondir", "corrupt index", "link"])
def test_a_worktree_that_cannot_be_trusted_is_checked_out_afresh(
        repo: Repository, repo_path: Path, tmp_path: Path, damage: str) -> None:
    sha = head(repo_path)
    where = tmp_path / "wt" / "issue-5"
    kept = repo.open_worktree(where, sha, keep=True)
    (where / "src/app.py").write_text("changed\n")
    os.link(where / "src/deep/other.py", tmp_path / "other-link")
    if damage == "no index":
        (kept.private / "index").unlink()
    elif damage == "foreign commondir":
        (kept.private / "commondir").write_text(f"{tmp_path / 'elsewhere'}\n")
    elif damage == "corrupt index":
        (kept.private / "index").write_bytes(b"DIRC garbage")
    else:
        target = tmp_path / "elsewhere-wt"
        where.rename(target)
        where.symlink_to(target)
    again = repo.open_worktree(where, sha, keep=True)
    assert again.path == where  # reset before anything sees the files
    assert not where.is_symlink()
    assert manifest(where) == fresh(repo, sha, tmp_path / "fresh")
    if damage != "corrupt index":  # refused before any reset: a fresh directory
        assert (where / "src/deep/other.py").stat().st_nlink == 1
    assert again.staged_paths() == []


def test_a_kept_worktree_is_reset_once_before_anything_sees_it(
        repo: Repository, repo_path: Path, tmp_path: Path) -> None:
    sha = head(repo_path)
    where = tmp_path / "wt" / "issue-6"
    repo.open_worktree(where, sha, keep=True)
    (where / "left.txt").write_text("by the last step\n")
    again = repo.open_worktree(where, sha, keep=True)
    assert (where / "left.txt").exists()  # nothing done yet: the user's own reset does it
    again.reset(sha)
    assert not (where / "left.txt").exists()
    assert again.resets == 1
    (where / "left.txt").write_text("again\n")
    looked = repo.open_worktree(where, sha, keep=True)
    assert looked.staged_paths() == []  # any look at the files or the index resets first
    assert not (where / "left.txt").exists()


def test_a_git_planted_in_a_directory_the_record_vouched_for_is_removed(
        repo: Repository, repo_path: Path, tmp_path: Path) -> None:
    from jobs.adapters import dir_scan

    sha = head(repo_path)
    where = tmp_path / "wt" / "issue-7"
    kept = repo.open_worktree(where, sha, keep=True)
    (where / "junk").write_text("x\n")
    kept.reset(sha)  # walks, and keeps the record of the directories
    record = dir_scan.load(kept.private)
    assert record is not None and "src/deep" in record.dirs
    later = dataclasses.replace(record, started_ns=record.started_ns + 2 * dir_scan.RACY_NS)
    dir_scan.save(kept.private, later)  # as if the walk had been two seconds ago
    (where / "src/deep/.git").mkdir()
    (where / "src/deep/.git/config").write_text("[core]\n\tfsmonitor = evil\n")
    again = repo.open_worktree(where, sha, keep=True)
    again.reset(sha)
    assert not (where / "src/deep/.git").exists()
    assert manifest(where) == fresh(repo, sha, tmp_path / "fresh")
