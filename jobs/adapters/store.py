"""Durable job records: the local JSON file store under `.git/stepwise/` and the errors every
store raises (the interface is `jobs.ports.JobStore`, importable from here too)."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import tempfile
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from jobs.adapters.codec import assemble, batch_text, document, event_line
from jobs.basics.errors import StateError
from jobs.kernel.job import Job
from jobs.kernel.model import JobStatus
from jobs.ports import ConflictError, JobStore

__all__ = ["DAMAGED_HINT", "BusyError", "ConflictError", "FileStore", "JobStore", "checking_writes"]


class BusyError(StateError):
    """Another process is advancing the same job."""

    code = "job_busy"


DAMAGED_HINT = (
    "restore it from a backup, or move it aside and run the same issue again: the job is found "
    "again from its branch's trailers and its committed batches are adopted, not redone"
)


def checking_writes() -> bool:
    """Tests set STEPWISE_STORE_CHECK=1: every save then proves the whole record matches."""
    return os.environ.get("STEPWISE_STORE_CHECK") == "1"


class FileStore:
    """Local mode's record of issue N under `.git/stepwise/`: the progress file `issue-N.json`
    (the job), one file per batch in `issue-N.batches/` and the event log `issue-N.events.jsonl`.

    Each write is atomic (temporary file, fsync, rename), read back and checked; the progress
    file is written last and carries the version (compare-and-set). `save_unsynced` is the
    same write without the fsyncs, for a record that a crash may lose because what follows
    recovers it anyway (an attempt's start: jobs/engine/batch_run.py); the next durable save
    of the same files makes it durable too.
    """

    def __init__(self, state_dir: Path) -> None:
        self.state_dir = state_dir

    def path_for(self, number: int) -> Path:
        return self.state_dir / f"issue-{number}.json"

    def batch_path(self, number: int, batch: int) -> Path:
        return self.state_dir / f"issue-{number}.batches" / f"{batch}.json"

    def events_path(self, number: int) -> Path:
        return self.state_dir / f"issue-{number}.events.jsonl"

    def reload(self, job: Job) -> Job | None:
        return self.load(job.number)

    def numbers(self) -> list[int]:
        """The issue numbers that have a progress file, ascending."""
        found = []
        for path in self.state_dir.glob("issue-*.json"):
            digits = path.name[len("issue-"):-len(".json")]
            if digits.isdigit():
                found.append(int(digits))
        return sorted(found)

    def stored_status(self, job: Job) -> JobStatus | None:
        doc = self._document(job.number)
        if doc is None or doc.get("id") != job.id:
            return None
        return JobStatus(doc["status"])

    def _document(self, number: int) -> dict[str, Any] | None:
        path = self.path_for(number)
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return None
        try:
            doc = json.loads(raw)
            if not isinstance(doc, dict):
                raise ValueError("not a JSON object")
        except ValueError as exc:
            raise StateError(f"the progress file {path} is damaged: {exc}",
                             hint=DAMAGED_HINT) from None
        return doc

    def load(self, number: int) -> Job | None:
        doc = self._document(number)
        if doc is None:
            return None
        try:
            batches = (self.batch_path(number, k).read_bytes()
                       for k in range(1, int(doc.get("batch_count", 0)) + 1))
            return assemble(doc, batches, self._events(number)[: int(doc.get("event_count", 0))])
        except (OSError, ValueError, TypeError) as exc:
            message = exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else str(exc)
            raise StateError(f"the progress file {self.path_for(number)} is damaged: "
                             f"{message[:300]}", hint=DAMAGED_HINT) from None

    def _events(self, number: int) -> list[bytes]:
        """The event log's lines, as JSON texts."""
        try:
            lines = self.events_path(number).read_bytes().splitlines()
        except FileNotFoundError:
            return []
        return [line for line in lines if line.strip()]

    def save_unsynced(self, job: Job, *, touched: Collection[int] | None = None) -> Job:
        return self.save(job, touched=touched, durable=False)

    def save(self, job: Job, *, touched: Collection[int] | None = None,
             durable: bool = True) -> Job:
        stored = self._document(job.number)
        if stored is not None and not (isinstance(stored.get("id"), str)
                                       and isinstance(stored.get("version"), int)):
            raise StateError(f"the progress file {self.path_for(job.number)} is damaged: it "
                             "has no job id or version", hint=DAMAGED_HINT)
        same_job = stored is not None and stored.get("id") == job.id
        if same_job and stored is not None and stored.get("version") != job.version:
            raise ConflictError(
                f"job {job.id} was changed by another process (stored version "
                f"{stored.get('version')}, expected {job.version})",
                hint="run the command again; it resumes from the stored record",
            )
        numbers = [b.number for b in job.batches] if touched is None or not same_job \
            else sorted(set(touched))
        written = {}
        for number in numbers:
            payload = batch_text(job.batch(number), indent=1)
            self._write_atomically(self.batch_path(job.number, number), payload, durable)
            written[number] = payload
        logged = int(stored.get("event_count", 0)) if same_job and stored else 0
        logged_size = int(stored.get("events_size", -1)) if same_job and stored else 0
        if not same_job:
            self.events_path(job.number).unlink(missing_ok=True)
        events_size = self._append_events(job, logged, logged_size, durable)
        doc = document(job, events_size=events_size)
        payload = json.dumps(doc, indent=2)
        self._write_atomically(self.path_for(job.number), payload, durable)
        self._read_back(job, doc, written)
        job.version += 1
        return job

    def _append_events(self, job: Job, logged: int, logged_size: int,
                       durable: bool = True) -> int:
        """Append the events not yet on disk; returns the log's size, kept in the progress file
        (a log of another size holds lines of a save that never finished: it is rewritten)."""
        path = self.events_path(job.number)
        size = path.stat().st_size if path.exists() else 0
        new = job.events[logged:]
        if size != logged_size:
            lines = "".join(event_line(e) + "\n" for e in job.events)
            self._write_atomically(path, lines, durable)
            return len(lines.encode())
        if not new:
            return size
        chunk = b"".join(event_line(e).encode() + b"\n" for e in new)
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("ab") as handle:
            handle.write(chunk)
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
        return size + len(chunk)

    def _read_back(self, job: Job, doc: dict[str, Any], written: dict[int, str]) -> None:
        problem = self._document(job.number) != doc or any(
            self.batch_path(job.number, k).read_text(encoding="utf-8") != payload
            for k, payload in written.items())
        if not problem and checking_writes():
            stored = self.load(job.number)
            expected = job.model_copy(update={"version": job.version + 1})
            problem = stored is None or stored.model_dump(mode="json") != \
                expected.model_dump(mode="json")
        if problem:
            raise StateError(
                f"the progress file for job {job.id} did not read back as written",
                hint="check the disk (full? read-only?) and run the command again",
            )

    def _write_atomically(self, path: Path, payload: str, durable: bool = True) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(payload)
                handle.flush()
                if durable:
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
                    f"job #{number} is busy: another stepwise process (pid {holder}) is "
                    "running it", hint="wait for it to stop at a gate (`stepwise status` "
                    "shows where it is), or use `stepwise cancel` to stop it",
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
                if not self.path_for(number).exists():  # a look-up that found no job
                    path.unlink(missing_ok=True)
                fcntl.flock(handle, fcntl.LOCK_UN)

    def is_locked(self, number: int) -> bool:
        try:
            with self.lock(number):
                return False
        except BusyError:
            return True
