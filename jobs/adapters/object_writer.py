"""Objects written by Stepwise itself, as git writes loose objects: no `hash-object` or
`write-tree` process.

The bytes staged from a worktree are Stepwise's own reads (jobs/adapters/staging.py), so
writing them needs no filter, attribute or configuration: the object id is the SHA-1 of
`blob <size>\\0<bytes>`, and the object is that text compressed with zlib, under
`objects/<2 hex>/<38 hex>` of the repository's common directory, made read-only and moved
into place with a hard link (an object already there is kept and only touched, as git
does, so a prune does not take it before the tree that names it exists). Trees built by
jobs/adapters/tree_writer.py are written the same way (`tree <size>\\0<entries>`).
Repositories that do not use SHA-1 object names get None, and the caller asks git.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
import zlib
from collections.abc import Sequence
from pathlib import Path


def write_blobs(objects: Path, blobs: Sequence[bytes], *, sha1: bool) -> list[str] | None:
    """Each blob's object id, the objects written under `objects`; None when the repository's
    object names are not SHA-1 (`sha1` False) or `objects` is not a real directory."""
    if not sha1 or objects.is_symlink() or not objects.is_dir():
        return None
    return [write_object(objects, b"blob", data) for data in blobs]


def blob_id(data: bytes, *, sha1: bool = True) -> str:
    """The object id git gives `data` as a blob (SHA-1, or SHA-256 where `sha1` is False)."""
    digest = hashlib.sha1 if sha1 else hashlib.sha256
    return digest(_raw(b"blob", data), usedforsecurity=False).hexdigest()


def _raw(kind: bytes, body: bytes) -> bytes:
    """The bytes git hashes and stores for an object: its header, then its body."""
    return kind + b" %d\0" % len(body) + body


def write_object(objects: Path, kind: bytes, body: bytes) -> str:
    """Write `body` as a SHA-1 object of `kind` (b"blob", b"tree") under `objects` (a real
    directory, checked by the caller); its object id."""
    raw = _raw(kind, body)
    oid = hashlib.sha1(raw, usedforsecurity=False).hexdigest()
    folder = objects / oid[:2]
    final = folder / oid[2:]
    if final.is_file():
        with contextlib.suppress(OSError):
            os.utime(final)
        return oid
    if not folder.is_dir():
        folder.mkdir(exist_ok=True)
        with contextlib.suppress(OSError):  # a shared repository's group bits, as git keeps them
            folder.chmod(objects.stat().st_mode & 0o7777)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix="tmp_obj_")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(zlib.compress(raw))
        os.chmod(tmp, 0o444)
        with contextlib.suppress(FileExistsError):  # written meanwhile by someone else
            os.link(tmp, final)
    finally:
        os.unlink(tmp)
    return oid
