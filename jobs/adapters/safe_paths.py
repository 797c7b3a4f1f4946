"""Reading and writing files of a worktree without ever following a link out of it.

A path is opened one component at a time from the worktree's root with `O_NOFOLLOW`, so a
symlinked file or parent directory, a `..`, a `.git` component or a special file (fifo,
device, socket) is refused with an UnsafePathError naming the path, never followed.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from enum import StrEnum
from pathlib import Path, PurePosixPath

from jobs.basics.errors import RetryClass, StepwiseError
from jobs.inputs.caps import FileTooLargeError

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: opening a fifo must not hang; the fstat below then refuses it.
_FILE_FLAGS = os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
UNSAFE_HINT = ("Stepwise edits regular files only: leave the path out of `paths` (or add it to "
               "`exclude`), or replace the link with the file itself; then retry or skip the batch")


class UnsafePathError(StepwiseError):
    """A path that is not a regular file inside the worktree was about to be read or written."""

    code = "unsafe_path"
    retry_class = RetryClass.NEEDS_HUMAN

    def __init__(self, path: str, reason: str, *, hint: str = UNSAFE_HINT) -> None:
        super().__init__(f"refused `{path}`: {reason}", hint=hint,
                         evidence={"path": path, "reason": reason})
        self.path = path
        self.reason = reason


class Kind(StrEnum):
    """What a worktree path is, seen without following links."""

    MISSING = "missing"  # absent, or behind a symlinked or non-directory parent
    REGULAR = "regular"
    EXECUTABLE = "executable"
    SYMLINK = "symlink"
    DIRECTORY = "directory"
    SPECIAL = "special"  # fifo, socket, device


def _parts(rel: str) -> list[str]:
    path = PurePosixPath(rel)
    parts = list(path.parts)
    if not parts or path.is_absolute():
        raise UnsafePathError(rel, "it is not a path relative to the repository root")
    for part in parts:
        if part in ("..", "."):
            raise UnsafePathError(rel, "it leaves the repository root")
        if part.lower() == ".git":
            raise UnsafePathError(rel, "it points into a `.git`")
    return parts


@contextmanager
def _parent_fd(root: Path, parts: list[str], rel: str, *, missing_ok: bool) -> Iterator[int | None]:
    """An fd of the directory holding the last part, reached without following any link;
    None when a parent is missing (only if `missing_ok`)."""
    fd = os.open(root, _DIR_FLAGS & ~os.O_NOFOLLOW)  # the root itself may sit under a link
    try:
        for index, part in enumerate(parts[:-1]):
            try:
                child = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if missing_ok:
                    yield None
                    return
                raise UnsafePathError(rel, f"`{'/'.join(parts[:index + 1])}` does not exist") \
                    from None
            except OSError:  # ELOOP or ENOTDIR: a symlink or a file where a directory was
                where = "/".join(parts[: index + 1])
                raise UnsafePathError(rel, f"its parent `{where}` is a symlink or not a "
                                      "directory") from None
            os.close(fd)
            fd = child
        yield fd
    finally:
        os.close(fd)


def kind_of(root: Path, rel: str) -> Kind:
    """What `rel` is under `root`, without following a link (a link in a parent: MISSING)."""
    parts = _parts(rel)
    try:
        with _parent_fd(root, parts, rel, missing_ok=True) as fd:
            if fd is None:
                return Kind.MISSING
            info = os.stat(parts[-1], dir_fd=fd, follow_symlinks=False)
    except FileNotFoundError:
        return Kind.MISSING
    except UnsafePathError:
        return Kind.MISSING  # git sees nothing behind a symlinked parent either
    if stat.S_ISLNK(info.st_mode):
        return Kind.SYMLINK
    if stat.S_ISDIR(info.st_mode):
        return Kind.DIRECTORY
    if stat.S_ISREG(info.st_mode):
        return Kind.EXECUTABLE if info.st_mode & stat.S_IXUSR else Kind.REGULAR
    return Kind.SPECIAL


def _describe(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "it is a symbolic link"
    if stat.S_ISDIR(mode):
        return "it is a directory"
    return "it is not a regular file (a fifo, socket or device)"


def _open_regular(root: Path, rel: str, flags: int) -> int:
    parts = _parts(rel)
    with _parent_fd(root, parts, rel, missing_ok=False) as parent:
        assert parent is not None
        try:
            fd = os.open(parts[-1], flags | _FILE_FLAGS, dir_fd=parent)
        except FileNotFoundError:
            raise UnsafePathError(rel, "it does not exist") from None
        except OSError as exc:  # ELOOP for a link, ENXIO for a fifo without a reader, ...
            mode = os.stat(parts[-1], dir_fd=parent, follow_symlinks=False).st_mode
            reason = f"it cannot be opened ({exc.strerror})" if stat.S_ISREG(mode) \
                else _describe(mode)
            raise UnsafePathError(rel, reason) from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise UnsafePathError(rel, _describe(mode))
    os.set_blocking(fd, True)
    return fd


def require_regular(root: Path, rel: str) -> None:
    """Raise UnsafePathError unless `rel` is a regular file inside `root` (no link on the way)."""
    os.close(_open_regular(root, rel, os.O_RDONLY))


def read_regular(root: Path, rel: str, *, limit: int | None = None) -> bytes:
    """The bytes of the regular file `rel` under `root`, never through a link; with `limit`,
    a file over it raises FileTooLargeError before more than `limit` bytes are read (its
    size is checked first, so a huge sparse file costs nothing)."""
    fd = _open_regular(root, rel, os.O_RDONLY)
    with os.fdopen(fd, "rb") as handle:
        if limit is None:
            return handle.read()
        size = os.fstat(fd).st_size
        if size > limit:
            raise FileTooLargeError(rel, size, limit)
        data = handle.read(limit + 1)  # the file may grow meanwhile: never more than this
        if len(data) > limit:
            raise FileTooLargeError(rel, max(size, len(data)), limit)
        return data


def write_regular(root: Path, rel: str, data: bytes) -> None:
    """Replace the contents of the existing regular file `rel` (its mode is kept)."""
    fd = _open_regular(root, rel, os.O_WRONLY)
    with os.fdopen(fd, "wb") as handle:
        handle.truncate(0)
        handle.write(data)


def put_regular(root: Path, rel: str, data: bytes) -> None:
    """Write the regular file `rel` under `root`, made (0644) with its missing directories if
    absent, never through a link: a parent or the file that is a link or not what it should be
    is an UnsafePathError (a file Stepwise itself writes outside the sandbox: the change note)."""
    parts = _parts(rel)
    fd = os.open(root, _DIR_FLAGS & ~os.O_NOFOLLOW)  # the root itself may sit under a link
    try:
        for index, part in enumerate(parts[:-1]):
            with suppress(FileExistsError):
                os.mkdir(part, 0o755, dir_fd=fd)
            try:
                child = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except OSError:  # ELOOP or ENOTDIR: a symlink or a file where a directory was
                raise UnsafePathError(rel, f"its parent `{'/'.join(parts[:index + 1])}` is a "
                                      "symlink or not a directory") from None
            os.close(fd)
            fd = child
        try:
            file = os.open(parts[-1], os.O_WRONLY | os.O_CREAT | _FILE_FLAGS, 0o644, dir_fd=fd)
        except OSError:
            mode = os.stat(parts[-1], dir_fd=fd, follow_symlinks=False).st_mode
            raise UnsafePathError(rel, _describe(mode)) from None
    finally:
        os.close(fd)
    if not stat.S_ISREG(os.fstat(file).st_mode):
        mode = os.fstat(file).st_mode
        os.close(file)
        raise UnsafePathError(rel, _describe(mode))
    os.set_blocking(file, True)
    with os.fdopen(file, "wb") as handle:
        handle.truncate(0)
        handle.write(data)


def check_new_path(root: Path, rel: str) -> None:
    """A file may be created at `rel`: it does not exist and no parent is a link or a file."""
    parts = _parts(rel)
    with _parent_fd(root, parts, rel, missing_ok=True) as fd:
        if fd is None:
            return  # created with its directories by whoever writes it, none of them a link
        try:
            info = os.stat(parts[-1], dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            return
    raise UnsafePathError(rel, "it already exists" if stat.S_ISREG(info.st_mode)
                          else _describe(info.st_mode))
