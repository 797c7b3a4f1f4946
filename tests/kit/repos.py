"""Helpers shared by the tests: real temporary git repositories and git calls."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test Author",
    "GIT_AUTHOR_EMAIL": "author@example.com",
    "GIT_COMMITTER_NAME": "Test Author",
    "GIT_COMMITTER_EMAIL": "author@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
}
# The identity a test repository configures: local commits are made as it (as `git commit`
# would), a person other than GIT_ENV's, who stands for anyone else committing.
OWNER_NAME, OWNER_EMAIL = "Repo Owner", "owner@example.com"


def git(repo: Path, *args: str, check: bool = True) -> str:
    """Run git in `repo` and return its stdout (stripped)."""
    env = {**os.environ, **GIT_ENV}
    done = subprocess.run(
        ["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=False
    )
    if check and done.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {done.stderr}")
    return done.stdout.strip()


def write_files(root: Path, files: Mapping[str, str | bytes]) -> None:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)


def make_repo(root: Path, files: Mapping[str, str | bytes], *, branch: str = "main") -> Path:
    """Create a git repository at `root` holding `files` in one initial commit."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", branch)
    git(root, "config", "user.name", OWNER_NAME)
    git(root, "config", "user.email", OWNER_EMAIL)
    write_files(root, files)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    return root


def commit_all(repo: Path, message: str) -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def validation_wrote(worktree: Path, rel: str) -> bool:
    """Whether a sandboxed validation command has written `rel` in the job's `worktree`: into
    the files themselves, or into the overlay that keeps its writes apart from them
    (`<worktree>.git/scratch/upper`, jobs/adapters/scratch.py)."""
    upper = worktree.with_name(f"{worktree.name}.git") / "scratch" / "upper"
    return (worktree / rel).exists() or (upper / rel).exists()
