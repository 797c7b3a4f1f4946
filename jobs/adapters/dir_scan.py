"""The walk that finds what git never looks at in a worktree, re-reading only directories that changed.

Git skips every entry named `.git` and every special file, so Stepwise looks for them itself
(jobs/adapters/staging.py, `clean_worktree`). A directory's entries can only change together
with its ctime, which no process can set (unlike an mtime), and an entry's name, kind and its
subdirectories are all in the directory itself. So the walk keeps, in the job's private git
directory (out of every sandbox's reach), each directory's inode and ctime and its
subdirectories; the next walk reads only directories whose inode or ctime differ, or whose
ctime was within a second of the last walk (a change in the same clock tick would leave the
ctime equal), and takes the rest from the record: a stat of each directory (1,000 for
100,000 files) instead of reading every entry.
"""

from __future__ import annotations

import json
import os
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path

RECORD_NAME = "dirs.json"
RACY_NS = 1_000_000_000


@dataclass(frozen=True)
class Seen:
    ino: int
    ctime_ns: int
    subdirs: tuple[str, ...]


@dataclass
class Scan:
    found: list[Path] = field(default_factory=list)  # `.git` entries and special files
    empty: list[Path] = field(default_factory=list)  # empty directories (never the root)
    dirs: dict[str, Seen] = field(default_factory=dict)
    started_ns: int = 0
    read: int = 0  # directories whose entries were read


def scan(root: Path, previous: Scan | None = None) -> Scan:
    """Walk `root` (never through a link), reading the directories `previous` cannot vouch for."""
    result = Scan(started_ns=time.time_ns())
    trusted_before = previous.started_ns - RACY_NS if previous is not None else 0
    pending = [""]
    while pending:
        rel = pending.pop()
        where = os.path.join(root, rel) if rel else str(root)
        try:
            info = os.lstat(where)
        except FileNotFoundError:
            continue
        if not stat.S_ISDIR(info.st_mode):
            continue  # replaced since its parent was read: the parent's ctime says so
        old = previous.dirs.get(rel) if previous is not None else None
        if old is not None and old.ino == info.st_ino and old.ctime_ns == info.st_ctime_ns \
                and info.st_ctime_ns < trusted_before:
            subdirs = old.subdirs
        else:
            subdirs = _read(where, rel, result)
        result.dirs[rel] = Seen(info.st_ino, info.st_ctime_ns, subdirs)
        pending.extend(subdirs)
    return result


def _read(where: str, rel: str, result: Scan) -> tuple[str, ...]:
    result.read += 1
    subdirs: list[str] = []
    seen = False
    with os.scandir(where) as entries:
        for entry in entries:
            seen = True
            name = entry.name
            if len(name) == 4 and name.lower() == ".git":
                result.found.append(Path(entry.path))
            elif entry.is_dir(follow_symlinks=False):
                subdirs.append(f"{rel}/{name}" if rel else name)
            elif not entry.is_file(follow_symlinks=False) and not entry.is_symlink():
                result.found.append(Path(entry.path))  # a fifo, socket or device
    if not seen and rel:
        result.empty.append(Path(where))
    return tuple(subdirs)


def load(private: Path) -> Scan | None:
    """The record the last walk left, or None (absent, unreadable: every directory is read)."""
    try:
        data = json.loads((private / RECORD_NAME).read_text(encoding="utf-8"))
        dirs = {rel: Seen(int(ino), int(ctime), tuple(subdirs))
                for rel, (ino, ctime, subdirs) in data["dirs"].items()}
        return Scan(dirs=dirs, started_ns=int(data["started_ns"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def save(private: Path, result: Scan) -> None:
    """Keep `result` for the next walk; a walk that found anything is not kept (the next
    reads every directory again)."""
    path = private / RECORD_NAME
    if result.found or result.empty:
        forget(private)
        return
    data = {"started_ns": result.started_ns,
            "dirs": {rel: [seen.ino, seen.ctime_ns, list(seen.subdirs)]
                     for rel, seen in result.dirs.items()}}
    partial = path.with_name(f"{RECORD_NAME}.new")
    partial.write_text(json.dumps(data, separators=(",", ":")), encoding="utf-8")
    partial.replace(path)


def forget(private: Path) -> None:
    (private / RECORD_NAME).unlink(missing_ok=True)
