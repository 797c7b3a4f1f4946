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

import os
import subprocess
import threading
from pathlib import Path

from jobs.adapters.git_runner import end_session, git_session, run_git
from jobs.adapters.object_reader import ObjectReader

ANSWERS = (b"start: ok\n", b"prepare: ok\n", b"commit: ok\n")


class RefUpdater:
    """Moves refs compare-and-set; `objects` reads a ref's value again when the answers stop."""

    def __init__(self, *, cwd: Path, git_dir: Path, objects: ObjectReader) -> None:
        self._cwd, self._git_dir, self._objects = cwd, git_dir, objects
        self._process: subprocess.Popen[bytes] | None = None
        self._owner = os.getpid()  # a forked child never writes to its parent's process
        self._lock = threading.Lock()
        self.started = 0  # processes started (tests count them)

    def update(self, ref: str, new: str, old: str) -> None:
        """Move `ref` from `old` to `new`; WorkspaceError (git's message) when it is not at
        `old`."""
        if any(c in value for value in (ref, new, old) for c in "\n\r "):
            raise ValueError(f"not a ref update: {ref!r} {new!r} {old!r}")
        with self._lock:
            if self._transaction(ref, new, old):
                return
            self._stop()
        now = self._objects.info(f"{ref}^{{commit}}")
        if now is not None and now.oid == new:  # done before the process went
            return
        run_git(["update-ref", ref, new, old], cwd=self._cwd, git_dir=self._git_dir)

    def close(self) -> None:
        with self._lock:
            self._stop()

    def _transaction(self, ref: str, new: str, old: str) -> bool:
        """True when git answered the whole transaction with ok."""
        process = self._running()
        if process is None or process.stdin is None or process.stdout is None:
            return False
        try:
            process.stdin.write(f"start\nupdate {ref} {new} {old}\nprepare\ncommit\n".encode())
            process.stdin.flush()
            return all(process.stdout.readline() == answer for answer in ANSWERS)
        except (OSError, ValueError):  # a broken pipe, a closed file
            return False

    def _running(self) -> subprocess.Popen[bytes] | None:
        if self._owner != os.getpid():  # forked: the process and its pipes are the parent's
            self._stop()
            self._owner = os.getpid()
        if self._process is None or self._process.poll() is not None:
            self._stop()
            try:
                self._process = git_session(["update-ref", "--stdin"], cwd=self._cwd,
                                            git_dir=self._git_dir)
            except OSError:
                return None
            self.started += 1
        return self._process

    def _stop(self) -> None:
        process, self._process = self._process, None
        if process is not None and self._owner == os.getpid():  # a forked child only lets go
            end_session(process)
