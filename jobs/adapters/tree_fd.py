"""Host-side operations on a tree sandboxed code could write, from directory file descriptors.

A sandboxed command may rename any directory it can write and put a symbolic link to a host
path in its place. So the worker never hands such a tree a path string to follow: every
operation here opens the tree's root, then each component with `O_NOFOLLOW | O_DIRECTORY`
relative to the previous one (`openat`), and acts on the last name relative to its parent's
descriptor (`unlinkat`, `rmdir` with `dir_fd`, `readlinkat`, `fstatat` without following).
A link or a non-directory anywhere on the way makes the operation a no-op (removals) or a
`TreeEscape` (reads), never a step outside the tree. Whole directories are removed by
`remove_tree`, which walks by descriptors too, never enters a link, and goes to any depth: a
command can leave a chain of directories deeper than PATH_MAX and than Python 3.11's stack,
which `shutil.rmtree` (recursive) fails on with a RecursionError.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator, Sequence
from pathlib import Path, PurePosixPath

DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class TreeEscape(OSError):
    """A component of a path in a sandbox-written tree is a link or not a directory."""

    def __init__(self, rel: str, where: str) -> None:
        super().__init__(f"`{rel}`: `{where}` is a symbolic link or not a directory; "
                         "Stepwise does not follow it")
        self.rel = rel
        self.where = where


def components(rel: str | PurePosixPath) -> list[str]:
    """The names of a relative path; ValueError for an absolute path, `..`, `.` or nothing."""
    path = PurePosixPath(rel)
    parts = [part for part in path.parts if part]
    if not parts or path.is_absolute() or any(part in (".", "..") for part in parts):
        raise ValueError(f"{str(rel)!r} is not a plain path relative to the tree's root")
    return parts


def open_root(root: Path) -> int:
    """The tree's root (the root itself may lie under a link the operator made)."""
    return os.open(root, DIR_FLAGS & ~os.O_NOFOLLOW)


@contextlib.contextmanager
def directory(root: Path, parts: Sequence[str], *, rel: str = "") -> Iterator[int]:
    """A descriptor of `root/parts...`, every component opened without following a link;
    TreeEscape when one is a link or a file, FileNotFoundError when one is missing."""
    fd = open_root(root)
    try:
        for index, part in enumerate(parts):
            try:
                child = os.open(part, DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                raise
            except OSError:  # ELOOP (a link) or ENOTDIR (a file where a directory was)
                raise TreeEscape(rel or "/".join(parts), "/".join(parts[: index + 1])) from None
            os.close(fd)
            fd = child
        yield fd
    finally:
        os.close(fd)


def lstat_at(parent: int, name: str) -> os.stat_result | None:
    try:
        return os.stat(name, dir_fd=parent, follow_symlinks=False)
    except FileNotFoundError:
        return None


def remove(root: Path, rel: str) -> bool:
    """Delete the entry at `rel` (a file, link, special file or a whole directory), never
    through a link; False when it, or a directory on its way, is missing, a link or a file."""
    parts = components(rel)
    try:
        with directory(root, parts[:-1], rel=rel) as parent:
            info = lstat_at(parent, parts[-1])
            if info is None:
                return False
            if stat.S_ISDIR(info.st_mode):
                remove_tree(parent, parts[-1])
            else:
                os.unlink(parts[-1], dir_fd=parent)
    except (FileNotFoundError, TreeEscape):
        return False
    return True


def discard(path: Path) -> None:
    """Delete `path` (a whole directory, a file or a link) if it is there, as `remove` does,
    leaving what cannot be deleted: where `shutil.rmtree(ignore_errors=True)` was used on a tree a
    repository shaped (it recurses, and a deep chain of directories stops it)."""
    with contextlib.suppress(OSError):
        remove(path.parent, path.name)


def remove_tree(parent: int, name: str) -> None:
    """Delete the directory `name` in `parent` and everything in it, never through a link, at
    any depth: a loop holding one descriptor, climbing back by `..`, with the names still to
    remove kept per level. Each directory is made readable and writable first (the caller's to
    delete: overlayfs's `work/work`, a directory a command left at mode 0)."""
    fd = _opened_for_removal(parent, name)
    pending = _clear(fd)
    levels: list[tuple[str, list[str]]] = []  # each open level: its name, its parent's rest
    try:
        while True:
            if pending:
                child = pending.pop()
                deeper = _opened_for_removal(fd, child)
                os.close(fd)
                fd = deeper
                levels.append((child, pending))
                pending = _clear(fd)
                continue
            if not levels:
                break
            child, pending = levels.pop()
            up = os.open("..", DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = up
            os.rmdir(child, dir_fd=fd)
    finally:
        os.close(fd)
    os.rmdir(name, dir_fd=parent)


def _opened_for_removal(parent: int, name: str) -> int:
    try:
        fd = os.open(name, DIR_FLAGS, dir_fd=parent)
    except PermissionError:  # a directory (a link fails with ELOOP): make it readable
        os.chmod(name, 0o700, dir_fd=parent)
        fd = os.open(name, DIR_FLAGS, dir_fd=parent)
    os.fchmod(fd, 0o700)  # and writable, so that its entries can go
    return fd


def _clear(fd: int) -> list[str]:
    """Remove every entry of the directory `fd` but the directories that are not empty; their
    names."""
    with os.scandir(fd) as entries:
        listed = [(entry.name, entry.is_dir(follow_symlinks=False)) for entry in entries]
    left = []
    for name, is_dir in listed:
        if not is_dir:
            os.unlink(name, dir_fd=fd)
            continue
        try:
            os.rmdir(name, dir_fd=fd)
        except OSError as exc:
            if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST):
                raise
            left.append(name)
    return left


def remove_if_empty(root: Path, rel: str) -> bool:
    """Delete `rel` if it is an empty directory or an empty regular file (what bubblewrap
    leaves where it bound something); never through a link, never anything else."""
    parts = components(rel)
    try:
        with directory(root, parts[:-1], rel=rel) as parent:
            info = lstat_at(parent, parts[-1])
            if info is None:
                return False
            if stat.S_ISDIR(info.st_mode):
                with contextlib.suppress(OSError):  # ENOTEMPTY: not a stub
                    os.rmdir(parts[-1], dir_fd=parent)
                    return True
            elif stat.S_ISREG(info.st_mode) and info.st_size == 0:
                os.unlink(parts[-1], dir_fd=parent)
                return True
    except (FileNotFoundError, TreeEscape):
        pass
    return False


def remove_empty_parents(root: Path, rel: str) -> None:
    """rmdir each directory above `rel` (not `root`) that is left empty, deepest first,
    stopping at the first that is not empty, missing or behind a link."""
    parts = components(rel)
    for depth in range(len(parts) - 1, 0, -1):
        try:
            with directory(root, parts[: depth - 1], rel=rel) as parent:
                info = lstat_at(parent, parts[depth - 1])
                if info is None or not stat.S_ISDIR(info.st_mode):
                    return
                os.rmdir(parts[depth - 1], dir_fd=parent)
        except OSError:  # not empty, gone, or a link on the way: its parents stay too
            return


def readlink(root: Path, rel: str) -> str:
    """The text of the symbolic link at `rel`, read relative to its real parent directory."""
    parts = components(rel)
    with directory(root, parts[:-1], rel=rel) as parent:
        return os.readlink(parts[-1], dir_fd=parent)


def real_parents(root: Path, rel: str) -> bool:
    """Whether every directory on the way to `rel` is a real directory of the tree."""
    parts = components(rel)
    try:
        with directory(root, parts[:-1], rel=rel):
            return True
    except (FileNotFoundError, TreeEscape):
        return False
