"""Durable job records: the store interface and the local JSON file store under `.git/stepwise/`."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

from pydantic import ValidationError

from jobs.errors import StateError
from jobs.model import Job


class ConflictError(StateError):
    """Someone else saved the job since it was read (compare-and-set failed)."""

    code = "state_conflict"


class BusyError(StateError):
    """Another process is advancing the same job."""

    code = "job_busy"


class JobStore(Protocol):
    def reload(self, job: Job) -> Job | None:
        """The stored copy of `job`, or None."""
        ...

    def save(self, job: Job) -> Job:
        """Write `job` if the stored version is still `job.version`; return the saved copy."""
        ...


class FileStore:
    """One JSON file per issue number; atomic replace, read back and validated after each write."""

    def __init__(self, state_dir: Path) -> None:
        self.state_dir = state_dir

    def path_for(self, number: int) -> Path:
        return self.state_dir / f"issue-{number}.json"

    def reload(self, job: Job) -> Job | None:
        return self.load(job.number)

    def load(self, number: int) -> Job | None:
        path = self.path_for(number)
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return None
        try:
            return Job.model_validate_json(raw)
        except ValidationError as exc:
            raise StateError(
                f"the progress file {path} is damaged: {exc.errors()[0]['msg']}",
                hint="restore it from a backup, or move it aside and run the same issue again: "
                "the job is found again from its branch's trailers and its committed batches "
                "are adopted, not redone",
            ) from exc

    def save(self, job: Job) -> Job:
        current = self.load(job.number)
        if current is not None and current.id == job.id and current.version != job.version:
            raise ConflictError(
                f"job {job.id} was changed by another process (stored version "
                f"{current.version}, expected {job.version})",
                hint="run the command again; it resumes from the stored record",
            )
        saved = job.model_copy(update={"version": job.version + 1}, deep=True)
        payload = saved.model_dump_json(indent=2)
        self._write_atomically(self.path_for(job.number), payload)
        reread = self.load(job.number)
        if reread is None or reread.model_dump(mode="json") != json.loads(payload):
            raise StateError(
                f"the progress file for job {job.id} did not read back as written",
                hint="check the disk (full? read-only?) and run the command again",
            )
        job.version = saved.version
        return reread

    def _write_atomically(self, path: Path, payload: str) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(payload)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            raise

    @contextlib.contextmanager
    def lock(self, number: int) -> Iterator[None]:
        """Hold the job's lock file while advancing it; BusyError if another process holds it."""
        self.state_dir.mkdir(parents=True, exist_ok=True)
        path = self.state_dir / f"issue-{number}.lock"
        with path.open("a+") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError as exc:
                handle.seek(0)
                holder = handle.read().strip() or "unknown"
                raise BusyError(
                    f"another stepwise process (pid {holder}) is running job #{number}",
                    hint="wait for it to stop at a gate, or use `stepwise cancel` to stop it",
                ) from exc
            handle.seek(0)
            handle.truncate()
            handle.write(str(os.getpid()))
            handle.flush()
            try:
                yield
            finally:
                handle.seek(0)
                handle.truncate()
                fcntl.flock(handle, fcntl.LOCK_UN)

    def is_locked(self, number: int) -> bool:
        try:
            with self.lock(number):
                return False
        except BusyError:
            return True
