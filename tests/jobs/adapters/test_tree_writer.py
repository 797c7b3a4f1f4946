"""The tree Stepwise builds from a staged change is the tree `git write-tree` writes from the
same index, byte for byte; where it could differ, git writes it."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from jobs.adapters.workspace import Repository, Worktree
from tests.conftest import RepoFactory
from tests.jobs.adapters.test_index_state import git_calls
from tests.kit.repos import git

# Names whose order in a tree is easy to get wrong: a directory sorts as if it ended in "/",
# so "a" (a directory) comes after "a-b" and "a.b" but before "a0"; bytes, not characters.
NAMES = ["a", "a-b", "a.b", "a0", "ab", "b", "Z", "é", "space name", "x.py", "a b"]


def private_git(wt: Worktree, *args: str) -> str:
    """A read of the worktree that leaves its index as it is (no stat refresh written back)."""
    return subprocess.run(["git", f"--git-dir={wt.private}", f"--work-tree={wt.path}", *args],
                          capture_output=True, text=True, check=True,
                          env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"}).stdout.strip()


def gits_tree(wt: Worktree, tmp_path: Path) -> str:
    """What `git write-tree` writes from the worktree's index, read from a copy of it (git
    writes its cache tree back into the index it reads, which Stepwise would then distrust)."""
    copy = tmp_path / "index-copy"
    shutil.copyfile(wt.private / "index", copy)
    return subprocess.run(["git", f"--git-dir={wt.private}", "write-tree"], capture_output=True,
                          text=True, check=True, env={**os.environ, "GIT_INDEX_FILE": str(copy)}
                          ).stdout.strip()


def tracked(path: Path, commit: str) -> list[str]:
    listed = subprocess.run(["git", "-C", str(path), "ls-tree", "-r", "-z", "--name-only", commit],
                            capture_output=True, check=True).stdout
    return [os.fsdecode(name) for name in listed.split(b"\0") if name]


def random_files(rng: random.Random, count: int) -> dict[str, str]:
    files: dict[str, str] = {}
    while len(files) < count:
        depth = rng.choice([1, 1, 2, 3])
        path = "/".join(rng.choice(NAMES) for _ in range(depth))
        if any(other.startswith(path + "/") or path.startswith(other + "/") for other in files):
            continue  # a name cannot be a file and a directory at once
        files[path] = f"{path} {rng.random()}\n"
    return files


def random_change(rng: random.Random, root: Path, tracked: list[str]) -> list[str]:
    """Edits, removals (some emptying a directory), modes, links and new files in new and old
    directories; never a file where a directory is or the other way round."""
    touched: list[str] = []
    for path in rng.sample(tracked, k=min(len(tracked), rng.randint(1, 6))):
        target = root / path
        action = rng.choice(["edit", "remove", "mode", "link"] if not target.is_symlink()
                            else ["remove", "file again"])
        if action == "file again":
            target.unlink()
            target.write_text("a file again\n")
        elif action == "edit":
            target.write_text(f"edited {rng.random()}\n")
        elif action == "remove":
            target.unlink()
        elif action == "mode":
            target.chmod(0o755)
        else:
            target.unlink()
            os.symlink("somewhere/else", target)
        touched.append(path)
    for _ in range(rng.randint(0, 4)):
        depth = rng.choice([1, 2, 3])
        path = "/".join(rng.choice(NAMES) + "-new" * (n == depth - 1) for n in range(depth))
        parts = path.split("/")
        blocked = any("/".join(parts[:n]) in tracked or (root / "/".join(parts[:n])).is_file()
                      or (root / "/".join(parts[:n])).is_symlink() for n in range(1, len(parts)))
        if blocked or (root / path).is_dir() or path in touched:
            continue
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(f"new {rng.random()}\n")
        touched.append(path)
    return touched


@pytest.mark.parametrize("seed", range(12))
def test_a_built_tree_is_the_tree_git_writes_from_the_same_index(
        repo_factory: RepoFactory, tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    path = repo_factory(random_files(rng, rng.randint(3, 25)))
    repo = Repository(path)
    sha = git(path, "rev-parse", "HEAD")
    wt = repo.open_worktree(tmp_path / "wt" / "issue-1", sha, keep=True)
    files = tracked(path, sha)
    for _ in range(3):  # three batches in a row, each on the last one's commit
        touched = random_change(rng, wt.path, files)
        wt.stage_files(touched)
        with git_calls() as calls:
            tree = wt.write_tree()
        assert "write-tree" not in calls
        assert tree == gits_tree(wt, tmp_path)  # git's, from the very same index
        git(path, "fsck", "--strict", "--no-dangling", "--no-progress")
        commit = wt.commit_tree(tree, sha, f"batch {seed}")
        wt.reset(commit)
        assert private_git(wt, "status", "--porcelain", "--untracked-files=all") == ""
        sha, files = commit, tracked(path, commit)


def test_removing_every_file_builds_the_empty_tree(repo_factory: RepoFactory,
                                                   tmp_path: Path) -> None:
    path = repo_factory({"only/one.txt": "1\n", "two.txt": "2\n"})
    repo = Repository(path)
    sha = git(path, "rev-parse", "HEAD")
    wt = repo.open_worktree(tmp_path / "wt" / "issue-1", sha, keep=True)
    (wt.path / "only/one.txt").unlink()
    (wt.path / "two.txt").unlink()
    wt.stage_files(["only/one.txt", "two.txt"])
    with git_calls() as calls:
        tree = wt.write_tree()
    assert "write-tree" not in calls
    assert tree == gits_tree(wt, tmp_path) == git(path, "hash-object", "-t", "tree",
                                                        "/dev/null")


@pytest.mark.parametrize("turn", ["file into directory", "directory into file"])
def test_a_file_turned_directory_is_left_to_git(repo_factory: RepoFactory, tmp_path: Path,
                                                turn: str) -> None:
    path = repo_factory({"thing": "a file\n", "dir/inner.txt": "inside\n", "keep.txt": "k\n"})
    repo = Repository(path)
    sha = git(path, "rev-parse", "HEAD")
    wt = repo.open_worktree(tmp_path / "wt" / "issue-1", sha, keep=True)
    if turn == "file into directory":
        (wt.path / "thing").unlink()
        (wt.path / "thing").mkdir()
        (wt.path / "thing/now.txt").write_text("now a directory\n")
        wt.stage_files(["thing", "thing/now.txt"])
    else:
        (wt.path / "dir/inner.txt").unlink()
        (wt.path / "dir").rmdir()
        (wt.path / "dir").write_text("now a file\n")
        wt.stage_files(["dir/inner.txt", "dir"])
    with git_calls() as calls:
        tree = wt.write_tree()
    assert calls["write-tree"] == 1
    assert tree == gits_tree(wt, tmp_path)


def test_a_base_tree_git_would_not_write_is_left_to_git(repo_factory: RepoFactory,
                                                        tmp_path: Path) -> None:
    """A tree an old tool wrote with mode 100664: the index reads it as 100644, so git's
    write-tree differs from a copy of the base; Stepwise does not guess, git writes it."""
    path = repo_factory({"a.txt": "a\n", "b.txt": "b\n"})
    blob = git(path, "rev-parse", "HEAD:a.txt")
    other = git(path, "rev-parse", "HEAD:b.txt")
    body = (b"100664 a.txt\0" + bytes.fromhex(blob) + b"100644 b.txt\0" + bytes.fromhex(other))
    odd = subprocess.run(["git", "-C", str(path), "hash-object", "-t", "tree", "-w", "--stdin",
                          "--literally"], input=body, capture_output=True,
                         check=True).stdout.decode().strip()
    commit = git(path, "commit-tree", odd, "-p", "HEAD", "-m", "an old tool's tree")
    repo = Repository(path)
    wt = repo.open_worktree(tmp_path / "wt" / "issue-1", commit, keep=True)
    (wt.path / "b.txt").write_text("changed\n")
    wt.stage_files(["b.txt"])
    with git_calls() as calls:
        tree = wt.write_tree()
    assert calls["write-tree"] == 1
    assert tree == gits_tree(wt, tmp_path)
    assert "100644 blob" in git(path, "ls-tree", tree, "a.txt")
