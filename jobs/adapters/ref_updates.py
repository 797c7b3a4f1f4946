"""Branch moves through one long-lived `git update-ref --stdin` per repository (issue 47).

Every batch moves the job branch once, compare-and-set: from the head the record holds to the
batch's commit, refused if anyone moved it meanwhile. Each move is one transaction written to
the same process (`start`, `update <ref> <new> <old>`, `prepare`, `commit`), which git carries
out exactly as a one-shot `git update-ref <ref> <new> <old>`: the ref is locked, its value
compared with `old`, then written. A transaction git refuses ends the process (git exits on
it), and so may anything else; whenever the answers stop, the ref is read again: at `new` the
move happened, otherwise the one-shot `git update-ref` does it or says why it cannot (someone
moved the branch), with git's own message.
"""

from __future__ import annotations

import threading
from pathlib import Path

from jobs.adapters.git_runner import GitSession, run_git
from jobs.adapters.object_reader import ObjectReader

ANSWERS = (b"start: ok\n", b"prepare: ok\n", b"commit: ok\n")


class RefUpdater:
    """Moves refs compare-and-set; `objects` reads a ref's value again when the answers stop."""

    def __init__(self, *, cwd: Path, git_dir: Path, objects: ObjectReader) -> None:
        self._cwd, self._git_dir, self._objects = cwd, git_dir, objects
        self.session = GitSession(["update-ref", "--stdin"], cwd=cwd, git_dir=git_dir)
        self._lock = threading.Lock()

    def update(self, ref: str, new: str, old: str) -> None:
        """Move `ref` from `old` to `new`; WorkspaceError (git's message) when it is not at
        `old`."""
        if any(c in value for value in (ref, new, old) for c in "\n\r "):
            raise ValueError(f"not a ref update: {ref!r} {new!r} {old!r}")
        with self._lock:
            if self._transaction(ref, new, old):
                return
            self.session.stop()
        now = self._objects.info(f"{ref}^{{commit}}")
        if now is not None and now.oid == new:  # done before the process went
            return
        run_git(["update-ref", ref, new, old], cwd=self._cwd, git_dir=self._git_dir)

    def close(self) -> None:
        with self._lock:
            self.session.stop()

    def _transaction(self, ref: str, new: str, old: str) -> bool:
        """True when git answered the whole transaction with ok."""
        try:
            process = self.session.process()
        except OSError:
            return False
        if process.stdin is None or process.stdout is None:
            return False
        try:
            process.stdin.write(f"start\nupdate {ref} {new} {old}\nprepare\ncommit\n".encode())
            process.stdin.flush()
            return all(process.stdout.readline() == answer for answer in ANSWERS)
        except (OSError, ValueError):  # a broken pipe, a closed file
            return False
