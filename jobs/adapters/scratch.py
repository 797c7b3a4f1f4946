"""What a sandboxed command writes, kept apart from a job's worktree; and the record of what
Stepwise itself wrote there since the files were last put back.

A job's worktree has a private git directory beside it (`<name>.git`, jobs/adapters/workspace.py).
A validation command runs over an overlay: the worktree is its lower layer, read as it is, and
every write lands in an upper directory in `<private>/scratch` (the overlay is mounted in a mount
namespace of the command's own, `unshare --user --map-root-user --mount`, before bubblewrap
binds the merged view at the repository's mount). The next restore of the worktree, and the next
staging, drop that directory, so a command's writes (tracked or ignored files, `.git`, links,
modes, removals) never reach the files: the restore need not look for them.

Stepwise's own writes are recorded in `<private>/written` (jobs/adapters/worktree.py): after a
restore the files are exactly the index's (`exact`); a staging of named files by a caller that
wrote nothing else adds them. A restore that finds the record checks only those paths; one that
does not (a command wrote through, `stage_all`, a crash) proves the whole tree as before. A
command writes through (and drops the record) where its writes are the edit (a codemod,
`SandboxPolicy.writes_through`), where a writable bind lies inside the worktree, without
bubblewrap, and where the overlay is unavailable: that is said once in the log.
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
from pathlib import Path

from jobs.adapters import tree_fd

log = logging.getLogger(__name__)

SCRATCH = "scratch"  # <private>/scratch: upper/, work/ and merged/ of the overlay
RECORD = "written"  # <private>/written: what Stepwise wrote since the last restore
EXACT = b"exact"
WRITTEN = b"written"
# Characters the overlay's mount options cannot carry in a path (they separate options and
# layers); a worktree whose path has one writes through.
UNCARRIED = (",", ":", "\\", "\n")
# Mounts the overlay in a mount namespace of its own, then runs bubblewrap in it: $1 is `mount`
# by its absolute path, $2-$5 the lower, upper, work and merged directories, the rest is
# bubblewrap's argv. This runs outside the sandbox, as the worker with the host's files
# writable, in the worktree: it looks nothing up on a PATH (the command's names the sandbox's own
# places, /tmp/stepwise/repo/.venv/bin first, which on the host are any local user's to make; a
# relative entry would name the repository's files) and runs with LAUNCH_ENV, not the command's
# environment (a shell reads BASH_ENV or ENV from it).
# `userxattr`: overlayfs keeps its whiteouts' and opaque directories' marks in user.* attributes,
# which a user namespace may set (without it, removing a directory of the worktree fails).
MOUNT_SCRIPT = ('"$1" -t overlay overlay -o "lowerdir=$2,upperdir=$3,workdir=$4,userxattr" '
                '"$5" || exit 125; shift 5; exec "$@"')
LAUNCH_ENV = {"PATH": "/usr/bin:/bin"}
MOUNT_MARKS = {"user.overlay.uuid"}  # what the kernel marks an upper directory with at mount
OPAQUE = "user.overlay.opaque"  # overlayfs's mark (userxattr) of a directory that hides the lower
_said: list[str] = []  # the reason writes go through, once logged


def private_of(worktree: Path) -> Path | None:
    """The private git directory beside `worktree` when it is a job's worktree (real
    directories, a `commondir`), else None: such a directory has no record to keep."""
    private = worktree.with_name(f"{worktree.name}.git")
    if worktree.is_symlink() or private.is_symlink() or not private.is_dir() \
            or not (private / "commondir").is_file():
        return None
    return private


def carried(path: Path) -> bool:
    """Whether `path` can be a layer of the overlay (its mount options carry it)."""
    return not any(char in str(path) for char in UNCARRIED)


def layers(private: Path) -> tuple[Path, Path, Path]:
    """The upper, work and merged directories of the worktree's overlay, made if missing."""
    root = private / SCRATCH
    found = tuple(root / name for name in ("upper", "work", "merged"))
    for directory in found:
        directory.mkdir(parents=True, exist_ok=True)
    return found  # type: ignore[return-value]


def launcher(unshare: str, mount: str, lower: Path, private: Path) -> list[str]:
    """The argv prefix that mounts the overlay over `lower` and runs what follows in it
    (`unshare` and `mount` by absolute paths; run it with LAUNCH_ENV)."""
    upper, work, merged = layers(private)
    return [unshare, "--user", "--map-root-user", "--mount", "--", "/bin/sh", "-c", MOUNT_SCRIPT,
            "sh", mount, str(lower), str(upper), str(work), str(merged)]


def shown_root(worktree: Path, rel: str) -> Path:
    """Where to read `rel` as the last sandboxed command left it (a report it was told to write
    in the repository): the overlay's upper directory when that command wrote it, removed it or
    hid it (an opaque directory on the way), else the worktree itself. Read it from there
    without following a link (jobs/adapters/safe_paths.py): a removal there is a special file."""
    private = private_of(worktree)
    upper = private / SCRATCH / "upper" if private is not None else None
    if upper is None or upper.is_symlink() or not upper.is_dir():
        return worktree
    parts = tree_fd.components(rel)
    fd = tree_fd.open_root(upper)
    try:
        for index, part in enumerate(parts):
            info = tree_fd.lstat_at(fd, part)
            if info is None:
                return worktree
            if index == len(parts) - 1 or not stat.S_ISDIR(info.st_mode):
                return upper
            child = os.open(part, tree_fd.DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = child
            with contextlib.suppress(OSError):  # the directory replaced the worktree's
                if os.getxattr(fd, OPAQUE) == b"y":
                    return upper
        return upper
    finally:
        os.close(fd)


def clear(private: Path) -> bool:
    """Throw away what commands wrote apart (True when they wrote anything): the overlay's
    directories go, unless its upper directory is exactly as it was made (no entry, no mark,
    its mode as made), which leaves nothing to throw away and the directories to the next
    command (a batch whose validation writes nothing pays no removal and no new directories)."""
    root = private / SCRATCH
    if not root.is_dir() or root.is_symlink():
        return False
    if untouched(root / "upper", root / "merged"):
        return False
    return drop(private)


def untouched(upper: Path, made_alike: Path) -> bool:
    """Whether `upper` holds nothing a command could have left: no entry, no extended attribute
    but the mark the kernel itself puts on it at mount (overlayfs refuses its marks to what
    runs on the overlay), and the mode of `made_alike`, a directory made with it and never
    written (a command that changed the repository root's mode changed upper's)."""
    try:
        info, alike = upper.lstat(), made_alike.lstat()
        if not stat.S_ISDIR(info.st_mode) or info.st_mode != alike.st_mode:
            return False
        with os.scandir(upper) as entries:
            if any(True for _ in entries):
                return False
        return set(os.listxattr(upper, follow_symlinks=False)) <= MOUNT_MARKS
    except OSError:
        return False


def drop(private: Path) -> bool:
    """Throw the overlay's directories away; True when a command had written anything."""
    root = private / SCRATCH
    if not root.is_dir() or root.is_symlink():
        return False
    try:
        wrote = any(os.scandir(root / "upper"))
    except OSError:
        wrote = True
    parent = os.open(private, tree_fd.DIR_FLAGS)  # Stepwise's own: the sandbox never sees it
    try:  # at any depth, whatever the modes a command left (jobs/adapters/tree_fd.py)
        tree_fd.remove_tree(parent, SCRATCH)
    finally:
        os.close(parent)
    return wrote


def written_through(private: Path, why: str = "") -> None:
    """A command is about to write into the files themselves: the record no longer says what
    the files hold (the next restore proves the whole tree), and what earlier commands wrote
    apart is dropped, so the files alone are what the next command sees."""
    forget(private)
    drop(private)
    unavailable(why)


def unavailable(why: str) -> None:
    """Say once per reason (and process) why commands write into the worktree."""
    if why and why not in _said:
        _said.append(why)
        log.warning("sandboxed commands write into the job's worktree (%s); each restore "
                    "then checks the whole tree", why)


def forget(private: Path) -> None:
    (private / RECORD).unlink(missing_ok=True)


def read(private: Path) -> set[str] | None:
    """The paths Stepwise wrote since the files were last exactly the index's, when only
    those (None: unknown, or a restore with nothing declared since)."""
    found = _load(private)
    return found[1] if found is not None and found[0] == WRITTEN else None


def exact(private: Path) -> None:
    """The files are exactly the index's (a restore just ended)."""
    _keep(private, EXACT, set())


def add(private: Path, paths: set[str]) -> None:
    """Stepwise wrote `paths` and nothing else since the last record (kept only while the
    record is there: once lost, it stays lost until the next restore)."""
    found = _load(private)
    if found is None:
        forget(private)
        return
    _keep(private, WRITTEN, found[1] | paths)


def _load(private: Path) -> tuple[bytes, set[str]] | None:
    """The record's kind and paths; None when there is none (or not one of ours)."""
    try:
        data = (private / RECORD).read_bytes()
    except OSError:
        return None
    kind, _, rest = data.partition(b"\n")
    if kind not in (EXACT, WRITTEN):
        return None
    return kind, {os.fsdecode(name) for name in rest.split(b"\0") if name}


def _keep(private: Path, kind: bytes, paths: set[str]) -> None:
    partial = private / f"{RECORD}.new"
    partial.write_bytes(kind + b"\n" + b"\0".join(os.fsencode(p) for p in sorted(paths)))
    partial.replace(private / RECORD)


def reset_said() -> None:
    """Forget the logged reasons (for tests)."""
    _said.clear()
