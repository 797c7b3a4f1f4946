"""Putting a kept worktree back to a tree at the cost of what changed, not of the repository.

A job's worktree stays on the worker between steps (jobs/engine/context.py). Its private index
is out of the sandbox's reach, so it is the record of what the files were: `git status`
compares every file with it by its stat data (size, mtime, ctime, inode, mode; a sandboxed
command can set an mtime, never a ctime) and lists what is not tracked at all, in one walk
with no file read. Only what differs is then removed or checked out again. The `-c` settings
below make that comparison strict whatever the repository's configuration says.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

from jobs.adapters import tree_fd
from jobs.adapters.object_writer import blob_id
from jobs.basics.errors import WorkspaceError

# Every stat field is compared and no index entry may skip the check (docs/security.md).
STRICT_STAT: tuple[str, ...] = (
    "-c", "core.trustctime=true",
    "-c", "core.checkStat=default",
    "-c", "core.fileMode=true",
    "-c", "core.symlinks=true",
    "-c", "core.ignoreStat=false",
    "-c", "core.ignoreCase=false",
    "-c", "core.sparseCheckout=false",
    "-c", "core.splitIndex=false",
    "-c", "index.sparse=false",
    "-c", "core.preloadIndex=true",
)

STATUS_ARGS: tuple[str, ...] = (
    "-c", "core.quotepath=false", "status", "--porcelain=v1", "-z", "--untracked-files=normal",
    "--ignored=traditional", "--ignore-submodules=all", "--no-renames",
)
ZERO_MODE = "000000"


def index_fixes(raw: bytes) -> tuple[bytes, list[str]]:
    """From `git diff-index --cached --raw -z <tree>` (the tree is the source side): the
    `update-index --index-info` input that makes the index equal the tree again, and the paths
    the tree has whose files must be checked out (the others leave the index)."""
    fields = raw.split(b"\0")
    records, checkout = [], []
    for meta, name in zip(fields[0::2], fields[1::2], strict=False):
        if not meta.startswith(b":"):
            continue
        src_mode, _dst_mode, src_oid = meta[1:].decode().split(" ")[:3]
        path = os.fsdecode(name)
        if src_mode == ZERO_MODE:  # not in the tree: out of the index, the file goes as untracked
            records.append(b"0 " + b"0" * 40 + b"\t" + name + b"\0")
        else:
            records.append(f"{src_mode} {src_oid}\t".encode() + name + b"\0")
            checkout.append(path)
    return b"".join(records), checkout


def parse_status(out: bytes) -> tuple[list[str], list[str]]:
    """From `git status` (STATUS_ARGS): the tracked paths whose files differ from the index,
    and the untracked or ignored ones (a directory ends with `/`)."""
    changed, untracked = [], []
    for entry in out.split(b"\0"):
        if len(entry) < 4:
            continue
        code, path = entry[:2], os.fsdecode(entry[3:])
        if code in (b"??", b"!!"):
            untracked.append(path)
        elif code[1:] != b" ":
            changed.append(path)
    return changed, untracked


def remove_untracked(root: Path, rel: str) -> None:
    """Delete one untracked entry git listed, never through a link: every parent must be a
    real directory of the worktree (git does not descend into links, so one that is not means
    the listing does not describe the files; the caller then starts from an empty directory)."""
    parts = [part for part in rel.rstrip("/").split("/") if part]
    if not parts or any(part in (".", "..") for part in parts):
        raise WorkspaceError(f"git listed an impossible path {rel!r}")
    try:
        with tree_fd.directory(root, parts[:-1], rel=rel):
            pass
    except FileNotFoundError:
        return  # a removed directory held it
    except tree_fd.TreeEscape as escape:
        raise WorkspaceError(f"{rel!r} lies behind {escape.where!r}, which is not a "
                             "directory") from None
    tree_fd.remove(root, "/".join(parts))


def checkout_input(paths: list[str]) -> bytes:
    return b"".join(os.fsencode(path) + b"\0" for path in sorted(set(paths)))


def parse_ls_tree(out: bytes) -> Iterator[tuple[str, tuple[str, str]]]:
    """From `git ls-tree -z`: each path with its mode and object id."""
    for entry in out.split(b"\0"):
        if b"\t" in entry:
            meta, name = entry.split(b"\t", 1)
            mode, _kind, oid = meta.decode().split(" ")
            yield os.fsdecode(name), (mode, oid)


def holds_blob(root: Path, rel: str, mode: str, oid: str) -> bool:
    """Whether the file at `rel` is exactly the blob `oid` with `mode` (its bytes as git
    would hash them unfiltered, its executable bit, a link's text), read never through a
    link; False for anything else (the caller checks it out)."""
    parts = tree_fd.components(rel)
    try:
        with tree_fd.directory(root, parts[:-1], rel=rel) as parent:
            info = tree_fd.lstat_at(parent, parts[-1])
            if info is None:
                return False
            if mode in ("100644", "100755") and stat.S_ISREG(info.st_mode) \
                    and bool(info.st_mode & 0o100) == (mode == "100755"):
                fd = os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW, dir_fd=parent)
                with os.fdopen(fd, "rb") as handle:
                    data = handle.read()
            elif mode == "120000" and stat.S_ISLNK(info.st_mode):
                data = os.fsencode(os.readlink(parts[-1], dir_fd=parent))
            else:
                return False
    except OSError:
        return False
    return blob_id(data, sha1=len(oid) == 40) == oid
