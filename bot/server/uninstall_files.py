"""What an uninstall leaves on the worker's disk is deleted once its jobs have ended: the bare
clones of the installation's repositories with everything kept inside them (job worktrees,
attempt artifacts, llm transcripts: jobs/adapters/workspace.py's state directory), and their
cached job environments. Called by bot/server/installations.py after GitHub confirmed the
uninstall (or the removal of repositories) and every open job there was ended. Each clone is
deleted under the lock its users hold (bot/github/clone_use.py): never while a task uses it."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from pathlib import Path

from bot.github import clone_use
from jobs.adapters import tree_fd

log = logging.getLogger(__name__)
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


def _safe(part: str) -> bool:
    return bool(_NAME.fullmatch(part)) and part not in (".", "..")


def repository_dirs(workdir: Path, full_name: str) -> list[Path]:
    """The clone, its lock file and its cached environments (nothing for an odd name)."""
    owner, _, name = full_name.partition("/")
    if not (_safe(owner) and _safe(name)):
        return []
    base = workdir / "repos" / owner
    return [base / f"{name}.git", base / f"{name}.lock", workdir / "envs" / f"{owner}+{name}",
            clone_use.users_lock(workdir, full_name)]


def account_dirs(workdir: Path, account: str) -> list[Path]:
    """Every clone of the account and their cached environments."""
    if not _safe(account):
        return []
    envs = workdir / "envs"
    found = sorted(envs.glob(f"{account}+*")) if envs.is_dir() else []
    return [workdir / "repos" / account, *found]


def delete(paths: Iterable[Path], *, why: str) -> list[Path]:
    """Delete each path that exists (a directory with all it holds); the ones deleted."""
    gone = []
    for path in paths:
        if not path.exists() and not path.is_symlink():
            continue
        tree_fd.discard(path)  # a clone holds job worktrees a repository shaped, any depth
        gone.append(path)
    if gone:
        log.info("files of an uninstalled repository deleted", extra={
            "reason": why, "paths": [str(p) for p in gone]})
    return gone


def forget_repository(workdir: Path, full_name: str, *, why: str) -> list[Path]:
    """Delete the repository's files once no task uses its clone (a task waiting to use it
    finds it gone, and the App's mark of the removal keeps it from cloning again)."""
    paths = repository_dirs(workdir, full_name)
    if not any(path.exists() for path in paths):
        return []
    with clone_use.unused(clone_use.users_lock(workdir, full_name)):
        return delete(paths, why=why)


def forget_account(workdir: Path, account: str, *, why: str) -> list[Path]:
    """Every clone of the account (each once no task uses it), then what is left of it."""
    folder = workdir / "repos" / account
    gone = []
    if _safe(account) and folder.is_dir():
        for clone in sorted(folder.glob("*.git")):
            gone += forget_repository(workdir, f"{account}/{clone.name[:-4]}", why=why)
    return gone + delete(account_dirs(workdir, account), why=why)
