"""The tree of a staged change, built by Stepwise itself: no `git write-tree` process (issue 47).

A job's private index holds a tree Stepwise knows (jobs/adapters/index_state.py) plus the
entries it staged since, each with its mode and blob id. The tree `git write-tree` would write
from that index is the base tree with those entries in place: only the directories on the way
to a staged path change, so only those tree objects are read (through the repository's
long-lived reader) and written again (jobs/adapters/object_writer.py); every other subtree keeps
its id. Trees are laid out as git lays them out: entries sorted by name, a directory's name
compared as if it ended in `/`, modes without a leading zero, 20-byte ids.

Where the answer could differ from git's, there is none (None) and the caller asks `git
write-tree`: a staged path that turns a directory into a file or a file into a directory, a
base tree that is not in git's canonical form (unsorted, a mode the index would rewrite such
as `100664`, a name git refuses), an object that cannot be read, ids that are not SHA-1.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

Entry = tuple[str, str]  # (mode, object id) of a staged path
DIRECTORY = "40000"
CANONICAL_MODES = frozenset({"100644", "100755", "120000", DIRECTORY, "160000"})
_REFUSED_NAMES = (b"", b".", b"..")


class NotCanonical(Exception):
    """The change cannot be laid out here exactly as git would: leave it to git."""


def build_tree(base_tree: str, staged: Mapping[str, Entry | None],
               read_tree: Callable[[str], bytes | None],
               write_tree: Callable[[bytes], str]) -> str | None:
    """The id of `base_tree` with `staged` in place (path -> (mode, id), None for a removal),
    its new tree objects written with `write_tree` (the body -> its id); None when git must
    write it (see the module's docstring)."""
    changes: dict[tuple[bytes, ...], Entry | None] = {}
    for path, entry in staged.items():
        parts = tuple(part.encode("utf-8", "surrogateescape") for part in path.split("/"))
        if any(part in _REFUSED_NAMES for part in parts):
            return None
        if entry is not None and (entry[0] not in CANONICAL_MODES or entry[0] == DIRECTORY
                                  or len(entry[1]) != 40):
            return None
        changes[parts] = entry
    try:
        root = _rebuild(base_tree, changes, read_tree, write_tree)
    except NotCanonical:
        return None
    return root if root is not None else write_tree(b"")


def _rebuild(tree: str | None, changes: dict[tuple[bytes, ...], Entry | None],
             read_tree: Callable[[str], bytes | None],
             write_tree: Callable[[bytes], str]) -> str | None:
    """The id of `tree` (None: an empty directory) with `changes` (relative paths) in place;
    None when nothing is left in it (git writes no empty directory)."""
    entries = _entries(tree, read_tree) if tree is not None else {}
    leaves = {parts[0]: entry for parts, entry in changes.items() if len(parts) == 1}
    nested: dict[bytes, dict[tuple[bytes, ...], Entry | None]] = {}
    for parts, entry in changes.items():
        if len(parts) > 1:
            nested.setdefault(parts[0], {})[parts[1:]] = entry
    if leaves.keys() & nested.keys():
        raise NotCanonical  # the same name as a file and as a directory in one change
    for name, entry in leaves.items():
        current = entries.get(name)
        if current is not None and current[0] == DIRECTORY:
            raise NotCanonical  # a file where a directory was
        if entry is None:
            entries.pop(name, None)
        else:
            entries[name] = entry
    for name, inner in nested.items():
        current = entries.get(name)
        if current is not None and current[0] != DIRECTORY:
            raise NotCanonical  # a directory where a file was
        subtree = _rebuild(current[1] if current else None, inner, read_tree, write_tree)
        if subtree is None:
            entries.pop(name, None)
        else:
            entries[name] = (DIRECTORY, subtree)
    if not entries:
        return None
    return write_tree(_body(entries))


def _entries(tree: str, read_tree: Callable[[str], bytes | None]) -> dict[bytes, Entry]:
    """A tree object's entries (name -> (mode, id)), refused unless git itself would write the
    same bytes for them."""
    data = read_tree(tree)
    if data is None:
        raise NotCanonical
    entries: dict[bytes, Entry] = {}
    offset, last = 0, b""
    try:
        while offset < len(data):
            space = data.index(b" ", offset)
            nul = data.index(b"\0", space)
            mode = data[offset:space].decode("ascii")
            name = data[space + 1:nul]
            oid = data[nul + 1:nul + 21]
            offset = nul + 21
            key = _key(name, mode)
            if mode not in CANONICAL_MODES or name in _REFUSED_NAMES or b"/" in name \
                    or len(oid) != 20 or key <= last:
                raise NotCanonical
            entries[name], last = (mode, oid.hex()), key
    except (ValueError, UnicodeDecodeError):
        raise NotCanonical from None
    if _body(entries) != data:
        raise NotCanonical
    return entries


def _key(name: bytes, mode: str) -> bytes:
    return name + b"/" if mode == DIRECTORY else name


def _body(entries: Mapping[bytes, Entry]) -> bytes:
    return b"".join(mode.encode("ascii") + b" " + name + b"\0" + bytes.fromhex(oid)
                    for name, (mode, oid) in sorted(entries.items(),
                                                    key=lambda item: _key(item[0], item[1][0])))
