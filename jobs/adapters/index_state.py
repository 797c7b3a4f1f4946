"""What a job's worktree knows about its private index without asking git again.

Only Stepwise's own git calls write the private index (it lies out of every sandbox's
reach), so after a reset, a staging or a `write-tree` the worktree knows which tree the
index holds and, for the trees it wrote, exactly which bytes differ from the head. That
spares a step the processes that would only say it again: the reset's `diff-index` when the
index already is the target's tree, the read of the written tree's files for the completion
check, and a second diff for the staged paths (one `git diff --patch-with-raw` gives both the
paths and the text). The index file's stat data is kept with what is known: an index that
changed in any other way is not trusted, and git is asked as before. What the index holds
is also kept in the private git directory (`index.known`, beside the index and as far out
of reach), so the next step, in another process, trusts it on the same terms.

What this process staged is known with each entry's mode and blob id (so the tree is built
without `git write-tree`, jobs/adapters/tree_writer.py), and with the stat data the staged
files had when Stepwise read them (`vouched`): a reset to the tree written from them finds
those files as they were staged, by their stat data alone, and asks git nothing.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from jobs.adapters import tree_fd

Stamp = tuple[int, int, int, int]
FileStamp = tuple[int, int, int, int, int] | None  # a file's inode, size, times, mode; None: absent
Entry = tuple[str, str]  # a staged path's mode and blob id
RECORD_NAME = "index.known"


def file_stamp(root: Path, rel: str) -> FileStamp | Literal[False]:
    """What a change to the file at `rel` (its bytes, its mode, the file itself) would change,
    looked at without following a link on the way; False when that cannot be said (a link or
    a file where a directory should be)."""
    parts = tree_fd.components(rel)
    try:
        with tree_fd.directory(root, parts[:-1], rel=rel) as parent:
            info = tree_fd.lstat_at(parent, parts[-1])
    except FileNotFoundError:
        return None
    except OSError:  # TreeEscape among them
        return False
    if info is None:
        return None
    return (info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_mode)


def stamps_of(root: Path, paths: Iterable[str]) -> dict[str, FileStamp]:
    """The stamps of `paths` as they are now (those that can be stamped)."""
    stamps: dict[str, FileStamp] = {}
    for path in paths:
        stamp = file_stamp(root, path)
        if stamp is not False:
            stamps[path] = stamp
    return stamps


def stamp_of(index: Path) -> Stamp | None:
    try:
        info = index.lstat()
    except OSError:
        return None
    return (info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


@dataclass
class IndexState:
    """The commit or tree the index holds, apart from the changes `staged` since (path ->
    the bytes staged, None for a removal); `base` None means unknown."""

    index: Path
    base: str | None = None
    staged: dict[str, bytes | None] = field(default_factory=dict)
    stamp: Stamp | None = None
    staged_read: tuple[list[str], str] | None = None  # the staged paths and diff, once read
    # (head, tree, diff): the staged diff read just before `tree` was written from it
    written_diff: tuple[str, str, str] | None = None
    entries: dict[str, Entry | None] = field(default_factory=dict)  # `staged`'s index entries
    # The staged files' stamps as Stepwise read them, kept while the index holds what they
    # became (through `write-tree` and the commit of it) and dropped by any other change.
    vouched: dict[str, FileStamp] = field(default_factory=dict)

    @classmethod
    def load(cls, index: Path) -> IndexState:
        """What the last process knew of `index`, trusted only while the index is unchanged."""
        state = cls(index)
        try:
            base, *numbers = (index.parent / RECORD_NAME).read_text(encoding="ascii").split()
            stamp = (int(numbers[0]), int(numbers[1]), int(numbers[2]), int(numbers[3]))
        except (OSError, ValueError, IndexError):
            return state
        if len(base) == 40 and stamp == stamp_of(index):
            state.base, state.stamp = base, stamp
        return state

    def known(self, base: str, *, written: bool = False) -> None:
        """The index now holds exactly `base` (written by Stepwise's own git call); `written`:
        `base` is the tree just written from it, so the staged files still vouch for it."""
        self.base, self.staged, self.staged_read, self.entries = base, {}, None, {}
        if not written:
            self.vouched = {}
        self.stamp = stamp_of(self.index)
        self._keep()

    def now_commit(self, commit: str) -> None:
        """The index holds `base`'s tree, which is also `commit`'s."""
        self.base = commit
        self._keep()

    def _keep(self) -> None:
        record = self.index.parent / RECORD_NAME
        if self.base is None or self.stamp is None:
            record.unlink(missing_ok=True)
            return
        partial = record.with_name(f"{RECORD_NAME}.new")
        partial.write_text(" ".join([self.base, *map(str, self.stamp)]) + "\n",
                           encoding="ascii")
        partial.replace(record)

    def changed(self, staged: dict[str, bytes | None], entries: dict[str, Entry | None],
                vouched: dict[str, FileStamp]) -> None:
        self.staged.update(staged)
        self.entries.update(entries)
        self.vouched.update(vouched)
        self.staged_read = None
        self.stamp = stamp_of(self.index)
        (self.index.parent / RECORD_NAME).unlink(missing_ok=True)  # holds more than a base

    def forget(self) -> None:
        (self.index.parent / RECORD_NAME).unlink(missing_ok=True)
        self.base, self.staged, self.staged_read, self.stamp = None, {}, None, None
        self.entries, self.vouched = {}, {}

    def holds(self, base: str) -> bool:
        """Whether the index holds exactly `base`, as far as Stepwise's own writes say."""
        return self.base == base and not self.staged and self.stamp is not None \
            and self.stamp == stamp_of(self.index)

    def trusted(self) -> bool:
        return self.base is not None and self.stamp is not None \
            and self.stamp == stamp_of(self.index)

    def vouches_for(self, files: Path, paths: set[str]) -> bool:
        """Whether each of `paths` is still the file Stepwise staged (the same stamp): then,
        while the index holds what was staged, each file holds its index entry."""
        return bool(paths) and all(path in self.vouched and
                                   file_stamp(files, path) == self.vouched[path]
                                   for path in paths)


def parse_patch_with_raw(out: bytes) -> tuple[list[str], bytes]:
    """From `git diff --patch-with-raw -z`: every path the diff names (both sides of a
    rename, the new side of a copy), sorted, and the patch text as git printed it."""
    paths: set[str] = set()
    offset = 0
    while out.startswith(b":", offset):
        meta_end = out.index(b"\0", offset)
        status = out[offset:meta_end].rsplit(b" ", 1)[1]
        names = 2 if status[:1] in (b"R", b"C") else 1
        offset = meta_end + 1
        for number in range(names):
            end = out.index(b"\0", offset)
            if not (status[:1] == b"C" and number == 0):
                paths.add(os.fsdecode(out[offset:end]))
            offset = end + 1
    if paths:  # the raw part ends with an empty record before the patch
        if not out.startswith(b"\0", offset):
            raise ValueError("git diff --patch-with-raw printed no separator before the patch")
        offset += 1
    return sorted(paths), out[offset:]


def found_renames(patch: str) -> bool:
    """Whether a `git diff -M` patch paired a removed and an added file as a rename (its
    extended header says so); without one, the patch is the `--no-renames` one too."""
    return any(line.startswith(("similarity index ", "rename from ", "copy from "))
               for line in patch.splitlines())


class KnownTrees:
    """The last few trees (and their commits) a worktree wrote from a known index: each is
    its base with the staged bytes in place, so their files are read without git."""

    LIMIT = 8

    def __init__(self) -> None:
        self._trees: dict[str, tuple[str, dict[str, bytes | None]]] = {}

    def remember(self, tree: str, base: str, staged: dict[str, bytes | None]) -> None:
        if tree == base:
            return
        self._trees[tree] = (base, dict(staged))
        while len(self._trees) > self.LIMIT:
            del self._trees[next(iter(self._trees))]

    def alias(self, commit: str, tree: str) -> None:
        """`commit` holds `tree` (commit-tree of it)."""
        if tree in self._trees:
            self.remember(commit, *self._trees[tree])

    def lookup(self, sha: str) -> tuple[str, dict[str, bytes | None]] | None:
        return self._trees.get(sha)
