"""What a sandboxed command left in a worktree, turned into index entries by Stepwise itself.

Everything in the worktree is data: each candidate path is looked at without following links
(jobs/adapters/safe_paths.py); a regular file's bytes are read here and become a blob as they are (no
filter, attribute or eol conversion), a symlink becomes a symlink entry holding its text (the
diff guard then refuses it), a vanished file a deletion. A nested repository or a special file
stops the attempt with an UnsafePathError naming it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from jobs.adapters import dir_scan, index_state, scratch, tree_fd
from jobs.adapters.safe_paths import Kind, UnsafePathError, kind_of, read_regular
from jobs.inputs import caps

ZERO_OID = "0" * 40
_MODES = {Kind.REGULAR: "100644", Kind.EXECUTABLE: "100755", Kind.SYMLINK: "120000"}
# What a job's private git directory keeps between steps; anything else (a revert's state,
# MERGE_MSG, ...) is left over from a command that stopped half way.
_PRIVATE_KEEP = frozenset({"HEAD", "commondir", "index", dir_scan.RECORD_NAME,
                           index_state.RECORD_NAME, scratch.SCRATCH, scratch.RECORD})


@dataclass(frozen=True)
class Change:
    path: str
    mode: str  # "0" for a deletion
    data: bytes | None  # None for a deletion


def collect_changes(root: Path, paths: Iterable[str]) -> list[Change]:
    """The index entries that make the index match the files at `paths`; a file over
    caps.STAGED_FILE_BYTES, or a batch over caps.STAGED_BATCH_BYTES, is a FileTooLargeError
    that fails the batch naming the file and the limit."""
    changes, total = [], 0
    for path in paths:
        if path.endswith("/"):  # git lists an untracked directory holding `.git` this way
            raise UnsafePathError(path, "it holds a git repository (a planted `.git`)")
        kind = kind_of(root, path)
        if kind in (Kind.MISSING, Kind.DIRECTORY):  # a directory's files are listed one by one
            changes.append(Change(path, "0", None))
        elif kind is Kind.SYMLINK:
            target = tree_fd.readlink(root, path)
            changes.append(Change(path, _MODES[kind], os.fsencode(target)))
        elif kind is Kind.SPECIAL:
            raise UnsafePathError(path, "it is not a regular file (a fifo, socket or device)")
        else:
            data = _read_within(root, path, budget=caps.STAGED_BATCH_BYTES - total)
            total += len(data)
            changes.append(Change(path, _MODES[kind], data))
    return changes


def _read_within(root: Path, path: str, *, budget: int) -> bytes:
    """The file's bytes, read only if it is within the per-file cap and what is left of the
    batch's (sizes are checked before reading)."""
    try:
        return read_regular(root, path, limit=min(caps.STAGED_FILE_BYTES, budget))
    except caps.FileTooLargeError as error:
        size = int(error.evidence["size"])
        if size <= caps.STAGED_FILE_BYTES:  # the file fits; the batch does not
            raise caps.FileTooLargeError(path, caps.STAGED_BATCH_BYTES - budget + size,
                                         caps.STAGED_BATCH_BYTES, batch=True) from None
        raise


def index_info(changes: Iterable[Change], blobs: dict[str, str]) -> bytes:
    """`git update-index -z --index-info` input for `changes` (blobs: path -> object id)."""
    records = []
    for change in changes:
        oid = blobs[change.path] if change.data is not None else ZERO_OID
        records.append(f"{change.mode} {oid}\t".encode() + os.fsencode(change.path) + b"\0")
    return b"".join(records)


def clean_worktree(worktree: Path, private: Path) -> dir_scan.Scan:
    """Remove what git itself never looks at: every `.git` planted anywhere in the worktree (a
    file, link or directory; no tracked path can hold one, and git's own clean skips them in
    tracked directories), special files (fifos, sockets), empty directories (git tracks none)
    and state a stopped command left in the private git directory. The walk re-reads only
    directories that changed since the last one (jobs/adapters/dir_scan.py); the caller walks
    again once its own changes are made and keeps that record (`dir_scan.save`)."""
    found = dir_scan.scan(worktree, dir_scan.load(private))
    for entry in found.found:
        tree_fd.remove(worktree, entry.relative_to(worktree).as_posix())
    for directory in [*found.empty, *(entry.parent for entry in found.found)]:
        if directory != worktree:
            rel = directory.relative_to(worktree).as_posix()
            if tree_fd.remove_if_empty(worktree, rel):
                tree_fd.remove_empty_parents(worktree, rel)
    clean_private(private)
    return found


def clean_private(private: Path) -> None:
    """Remove what a stopped git command (an unfinished `revert`) left in the private git
    directory: everything but its HEAD, index and records."""
    for entry in private.iterdir():
        if entry.name not in _PRIVATE_KEEP:
            remove_entry(entry)


def remove_entry(path: Path) -> None:
    """Delete a file, link, special file or whole directory, never following a link (`path`'s
    parent is trusted: a directory Stepwise made, like the private git directory)."""
    tree_fd.remove(path.parent, path.name)


def planted_git_entries(root: Path) -> list[Path]:
    """Every entry named `.git` (any case) under `root`, not descending into links."""
    return [entry for entry in leftover_entries(root)[0] if entry.name.lower() == ".git"]


def leftover_entries(root: Path) -> tuple[list[Path], list[Path]]:
    """Every entry named `.git` (any case) under `root` and every special file (git ignores
    both), and every empty directory, not descending into links: one walk of directory reads,
    no stat (about 100 ms for 100,000 files)."""
    found = dir_scan.scan(root)
    return found.found, found.empty
