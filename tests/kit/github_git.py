"""Git plumbing on the fake GitHub's bare repositories: commits without a work tree, heads, logs, files."""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

FAKE_GIT_ENV = {
    "GIT_AUTHOR_NAME": "Fake Human",
    "GIT_AUTHOR_EMAIL": "human@example.invalid",
    "GIT_COMMITTER_NAME": "Fake Human",
    "GIT_COMMITTER_EMAIL": "human@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_TERMINAL_PROMPT": "0",
}


class GitError(RuntimeError):
    """A git command on a fake repository failed."""


@dataclass(frozen=True)
class CommitInfo:
    sha: str
    subject: str
    message: str
    author: str
    parents: tuple[str, ...]


def git(repo: Path, *args: str, input_bytes: bytes | None = None,
        env: Mapping[str, str] | None = None) -> bytes:
    """Run git with `repo` as the git directory and return stdout; raise GitError on failure."""
    done = subprocess.run(
        ["git", f"--git-dir={repo}", *args],
        input=input_bytes,
        env={**os.environ, **FAKE_GIT_ENV, **(env or {})},
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        raise GitError(f"git {' '.join(args)}: {done.stderr.decode(errors='replace').strip()}")
    return done.stdout


def git_text(repo: Path, *args: str) -> str:
    return git(repo, *args).decode().strip()


def init_bare(path: Path, *, default_branch: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        ["git", "init", "-q", "--bare", "-b", default_branch, str(path)],
        env={**os.environ, **FAKE_GIT_ENV},
        check=True,
        capture_output=True,
    )


def resolve(repo: Path, rev: str) -> str | None:
    """The commit sha `rev` names (branch, tag or sha), or None."""
    try:
        return git_text(repo, "rev-parse", "--verify", "-q", f"{rev}^{{commit}}") or None
    except GitError:
        return None


def branch_head(repo: Path, branch: str) -> str | None:
    return resolve(repo, f"refs/heads/{branch}")


def branches(repo: Path) -> list[str]:
    out = git_text(repo, "for-each-ref", "--format=%(refname:short)", "refs/heads/")
    return [line for line in out.splitlines() if line]


def commit_files(
    repo: Path,
    branch: str,
    files: Mapping[str, str | bytes | None],
    message: str,
    *,
    author: tuple[str, str] | None = None,
    start: str | None = None,
) -> str:
    """Commit `files` (None deletes) on `branch` (created from `start` if missing) and move it; the sha."""
    old = branch_head(repo, branch)
    parent = old or (branch_head(repo, start) if start else None)
    env = {}
    if author:
        env = {"GIT_AUTHOR_NAME": author[0], "GIT_AUTHOR_EMAIL": author[1]}
    with tempfile.TemporaryDirectory(prefix="fakegh-index-") as tmp:
        env["GIT_INDEX_FILE"] = str(Path(tmp) / "index")
        if parent:
            git(repo, "read-tree", parent, env=env)
        # Every blob written by one hash-object and the index changed by one update-index,
        # whatever the number of files (two git processes a file made a world's start slow).
        written = {path: content for path, content in files.items() if content is not None}
        sources = []
        for index, content in enumerate(written.values()):
            source = Path(tmp) / f"blob{index}"
            source.write_bytes(content.encode() if isinstance(content, str) else content)
            sources.append(f"{source}\n")
        blobs = git(repo, "hash-object", "-w", "--no-filters", "--stdin-paths",
                    input_bytes="".join(sources).encode()).decode().split() if written else []
        entries = [f"0 {'0' * 40}\t{path}\0" for path, content in files.items() if content is None]
        entries += [f"100644 {blob}\t{path}\0" for path, blob in zip(written, blobs, strict=True)]
        if entries:
            git(repo, "update-index", "-z", "--index-info", input_bytes="".join(entries).encode(),
                env=env)
        tree = git(repo, "write-tree", env=env).decode().strip()
    parents = ["-p", parent] if parent else []
    sha = git(repo, "commit-tree", tree, *parents, "-m", message, env=env).decode().strip()
    git(repo, "update-ref", f"refs/heads/{branch}", sha, old or "0" * 40)
    return sha


def log(repo: Path, rev: str, *, limit: int | None = None) -> list[CommitInfo]:
    """Commits reachable from `rev`, newest first (empty when `rev` does not exist)."""
    if ".." not in rev and resolve(repo, rev) is None:
        return []
    fmt = "%H%x1f%P%x1f%an <%ae>%x1f%B%x1e"
    extra = [f"-n{limit}"] if limit else []
    raw = git(repo, "log", *extra, f"--format={fmt}", rev, "--").decode()
    commits = []
    for record in raw.split("\x1e"):
        record = record.strip("\n")
        if not record:
            continue
        sha, parents, author, message = record.split("\x1f", 3)
        message = message.strip("\n")
        subject = message.splitlines()[0] if message else ""
        commits.append(CommitInfo(sha, subject, message, author, tuple(parents.split())))
    return commits


def commits_between(repo: Path, base: str, head: str) -> int:
    """How many commits `head` has that `base` does not (GitHub's "ahead by")."""
    return int(git_text(repo, "rev-list", "--count", f"{base}..{head}"))


def object_type(repo: Path, rev: str, path: str) -> str | None:
    """'blob', 'tree' or None for `path` at `rev`."""
    try:
        return git_text(repo, "cat-file", "-t", f"{rev}:{path}")
    except GitError:
        return None


def blob_sha(repo: Path, rev: str, path: str) -> str:
    return git_text(repo, "rev-parse", f"{rev}:{path}")


def read_blob(repo: Path, rev: str, path: str) -> bytes:
    return git(repo, "cat-file", "blob", f"{rev}:{path}")


def list_tree(repo: Path, rev: str, path: str) -> list[tuple[str, str, str, int]]:
    """Entries (type, sha, name, size) of the directory `path` at `rev`."""
    spec = f"{rev}:{path}" if path else f"{rev}^{{tree}}"
    out = git(repo, "ls-tree", "-l", spec).decode()
    entries = []
    for line in out.splitlines():
        meta, name = line.split("\t", 1)
        _mode, kind, sha, size = meta.split()
        entries.append((kind, sha, name, int(size) if size.isdigit() else 0))
    return entries


def merge(repo: Path, *, base: str, head: str, message: str, method: str = "merge") -> str:
    """Merge branch `head` into branch `base` like GitHub's merge button; the new base sha."""
    base_sha = branch_head(repo, base)
    head_sha = branch_head(repo, head)
    if base_sha is None or head_sha is None:
        raise GitError(f"cannot merge {head} into {base}: missing branch")
    tree = git_text(repo, "merge-tree", "--write-tree", base_sha, head_sha).splitlines()[0]
    if method == "squash":
        sha = git_text(repo, "commit-tree", tree, "-p", base_sha, "-m", message)
    elif method == "rebase":
        sha = base_sha
        for commit in reversed(log(repo, f"{base_sha}..{head_sha}")):
            picked = git_text(repo, "merge-tree", "--write-tree", f"--merge-base={commit.parents[0]}", sha,
                              commit.sha).splitlines()[0]
            sha = git_text(repo, "commit-tree", picked, "-p", sha, "-m", commit.message)
    else:
        sha = git_text(repo, "commit-tree", tree, "-p", base_sha, "-p", head_sha, "-m", message)
    git(repo, "update-ref", f"refs/heads/{base}", sha, base_sha)
    return sha
