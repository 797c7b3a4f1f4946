"""Who uses a repository's clone on this worker's disk. A task that opens the clone (its
worktrees, attempt artifacts and transcripts live inside it) holds a shared lock on
`repos/<owner>/<name>.users` until the task ends (bot/server/worker.py `perform` lets go);
deleting the clone after an uninstall (bot/server/uninstall_files.py) takes the same lock
exclusively, so it waits for every task using the clone and none opens it meanwhile.

flock locks belong to an open file: this process keeps one handle per clone and lets go of
them all at once; a lock file deleted with its clone is created again by the next user, who
then asks whether the App may still have that clone at all (bot/server/context.py)."""

from __future__ import annotations

import fcntl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

_held: dict[Path, IO[str]] = {}
_guard = threading.Lock()


def users_lock(workdir: Path, full_name: str) -> Path:
    owner, _, name = full_name.partition("/")
    return workdir / "repos" / owner / f"{name}.users"


def hold(lock: Path) -> None:
    """This process's task uses the clone `lock` guards (waits while it is being deleted)."""
    with _guard:
        if lock in _held:
            return
        lock.parent.mkdir(parents=True, exist_ok=True)
        handle = lock.open("a")
        fcntl.flock(handle, fcntl.LOCK_SH)
        _held[lock] = handle


def release_all() -> None:
    """The task ended: it uses no clone any more."""
    with _guard:
        handles = list(_held.values())
        _held.clear()
    for handle in handles:
        handle.close()


@contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold the exclusive lock of the file `path` (made if missing) for the block."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@contextmanager
def unused(lock: Path) -> Iterator[None]:
    """Wait until no task uses the clone `lock` guards, and keep every task out meanwhile."""
    with _guard:
        own = _held.pop(lock, None)  # this process's own hold would wait for itself
    if own is not None:
        own.close()
    with locked(lock):
        yield
