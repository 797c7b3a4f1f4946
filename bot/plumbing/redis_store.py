"""The Redis job store: the job document and each batch under their own keys (bot/plumbing/keys.py),
compare-and-set saves; a save writes only the batches that changed.

Records are written lean (jobs/adapters/codec.py: no default-valued fields outside the ones raw
readers use, compact JSON) and read by the same `assemble` as the full format, so records
written before, in the full format, load unchanged."""

from __future__ import annotations

import json
import logging
import threading
from collections import OrderedDict
from collections.abc import Collection
from typing import Any

import redis
from pydantic import ValidationError

from bot.plumbing.connections import as_text
from bot.plumbing.idle_index import index_job
from bot.plumbing.keys import JOBS, batches_key, ci_key, events_key, issue_key, job_key
from jobs.adapters.codec import assemble, batch_text, document, event_line
from jobs.adapters.store import ConflictError, checking_writes
from jobs.basics.errors import StateError
from jobs.kernel.job import Job
from jobs.kernel.model import JobStatus
from jobs.kernel.record_parts import Awaited, awaited_in

log = logging.getLogger("stepwise.events")
# The record's events worth a log line of their own (an operator alerts and searches on them):
# gates, commits (batches, notes, reverts, adoptions, withdrawals) and endings.
LOGGED_EVENTS = frozenset({"gate", "batch", "note", "revert", "adopt", "withdraw", "completed",
                           "failed", "cancelled", "installation_removed"})
REMEMBERED_JOBS = 256  # a worker that runs every step in one process touches many jobs
COMPACT = (",", ":")  # JSON without the spaces json.dumps puts after separators


class RedisStore:
    """Durable records in Redis. Safe for several workers: a stale save raises ConflictError."""

    def __init__(self, client: redis.Redis, *, remembered_jobs: int = REMEMBERED_JOBS) -> None:
        self.redis = client
        # What this process last read or wrote for each batch of the jobs it touched last, with
        # the record's version then, to write only what changed (a job it forgot, or whose
        # version moved since, has all its batches written at its next save).
        # The record's own document is remembered too, so a step can tell whether its closing
        # save would write anything new (`unchanged`).
        self._seen: OrderedDict[str, tuple[int, dict[str, str], str]] = OrderedDict()
        self._remembered = max(remembered_jobs, 1)
        self._seen_lock = threading.Lock()  # the reaper's thread loads jobs too

    def _remember(self, job_id: str, version: int, batches: dict[str, str], doc: str) -> None:
        with self._seen_lock:
            self._seen[job_id] = (version, batches, doc)
            self._seen.move_to_end(job_id)
            while len(self._seen) > self._remembered:
                self._seen.popitem(last=False)

    def _recalled(self, job_id: str, version: int) -> dict[str, str]:
        """What was remembered of the job at `version`; nothing if another version was (the
        reaper's thread may have read an older one meanwhile)."""
        with self._seen_lock:
            remembered = self._seen.get(job_id)
        return remembered[1] if remembered is not None and remembered[0] == version else {}

    def _recalled_doc(self, job_id: str, version: int) -> str | None:
        """The job's document as this process last read or wrote it at `version`."""
        with self._seen_lock:
            remembered = self._seen.get(job_id)
        return remembered[2] if remembered is not None and remembered[0] == version else None

    # -- reads ----------------------------------------------------------------------------------
    def load_id(self, job_id: str) -> Job | None:
        pipe = self.redis.pipeline(transaction=True)
        pipe.get(job_key(job_id))
        pipe.hgetall(batches_key(job_id))
        pipe.lrange(events_key(job_id), 0, -1)
        raw_doc, raw_batches, raw_events = pipe.execute()
        if raw_doc is None:
            return None
        batches = {as_text(k): as_text(v) for k, v in raw_batches.items()}
        try:
            doc: dict[str, Any] = json.loads(raw_doc)
            count = int(doc.get("batch_count", len(batches)))
            job = assemble(doc, (batches[str(k)] for k in range(1, count + 1)),
                           raw_events[: int(doc.get("event_count", 0))])
        except (ValueError, TypeError, KeyError, AttributeError, ValidationError) as exc:
            raise StateError(
                f"the Redis record of job {job_id} is damaged: {str(exc)[:300]}",
                hint="restore Redis from its append-only file, or delete the record to "
                "rebuild the job from GitHub",
            ) from exc
        self._remember(job_id, job.version, batches, as_text(raw_doc))
        return job

    def unchanged(self, job: Job) -> bool:
        """Whether `job` is what this process last read or wrote at its version: a save would
        write the same document, batches and events again."""
        seen = self._recalled(job.id, job.version)
        if len(seen) != len(job.batches) or any(
                seen.get(str(b.number)) != batch_text(b) for b in job.batches):
            return False
        remembered = self._recalled_doc(job.id, job.version)
        return remembered is not None and json.loads(remembered) == {**document(job),
                                                                     "version": job.version}

    def find(self, repo: str, number: int) -> Job | None:
        job_id = self.redis.get(issue_key(repo, number))
        return self.load_id(as_text(job_id)) if job_id else None

    def reload(self, job: Job) -> Job | None:
        return self.load_id(job.id)

    def stored_status(self, job: Job) -> JobStatus | None:
        doc = _stored_doc(job.id, self.redis.get(job_key(job.id)))
        return JobStatus(doc["status"]) if doc else None

    def job_ids(self, *, newest_first: bool = True, limit: int = 100, offset: int = 0) -> list[str]:
        if limit <= 0:
            return []
        end = offset + limit - 1
        items = (self.redis.zrevrange(JOBS, offset, end) if newest_first
                 else self.redis.zrange(JOBS, offset, end))
        return [as_text(item) for item in items if isinstance(item, bytes | str)]

    # -- writes ---------------------------------------------------------------------------------
    def save(self, job: Job, *, touched: Collection[int] | None = None) -> Job:
        """Write `job` if the stored version is still `job.version`; bumps `job.version`.

        Only the batches in `touched` are serialised and written (with None, those that differ
        from what this store last read or wrote), and only new events are appended.
        """
        key = job_key(job.id)
        seen = self._recalled(job.id, job.version)
        if touched is None:
            batches = {str(b.number): batch_text(b) for b in job.batches}
            changed = {k: v for k, v in batches.items() if seen.get(k) != v}
            removed = [k for k in seen if k not in batches]  # a re-plan left fewer batches
        else:
            removed = []
            changed = {str(n): batch_text(job.batch(n)) for n in touched}
        doc = document(job)
        text = json.dumps(doc, separators=COMPACT)
        with self.redis.pipeline(transaction=True) as pipe:
            try:
                pipe.watch(key)  # type: ignore[no-untyped-call]
                current = pipe.get(key)
                stored = _stored_doc(job.id, current)
                if current is not None and stored.get("version") != job.version:
                    raise ConflictError(
                        f"job {job.id} was changed by another worker (stored version "
                        f"{stored.get('version')}, expected {job.version})",
                        hint="the step is dropped; the job continues from the stored record",
                    )
                if current is None and job.version != 0:
                    raise StateError(f"the Redis record of job {job.id} disappeared",
                                     hint="rebuild the job from GitHub")
                logged = int(stored.get("event_count", 0))
                pipe.multi()
                pipe.set(key, text)
                if changed:
                    pipe.hset(batches_key(job.id), mapping=dict(changed.items()))
                if removed:
                    pipe.hdel(batches_key(job.id), *removed)
                if job.events[logged:]:
                    pipe.ltrim(events_key(job.id), 0, logged - 1)  # drop lines of a lost save
                    pipe.rpush(events_key(job.id), *(event_line(e) for e in job.events[logged:]))
                _index_ci_wait(pipe, job, awaited_in(stored), job.awaited())
                index_job(pipe, job.id, doc)
                if current is None:
                    pipe.set(issue_key(_repo_of(job), job.number), job.id)
                    pipe.zadd(JOBS, {job.id: job.created_at.timestamp()})
                pipe.execute()
                log_job_events(job, job.events[logged:])
            except redis.WatchError as exc:
                raise ConflictError(f"job {job.id} was changed by another worker meanwhile",
                                    hint="the step is dropped; the job continues from the "
                                    "stored record") from exc
        seen.update(changed)  # in place: a step's bookkeeping must not grow with the job
        for gone in removed:
            seen.pop(gone, None)
        self._remember(job.id, job.version + 1, seen, text)
        if checking_writes():
            stored_job = self.load_id(job.id)
            expected = job.model_copy(update={"version": job.version + 1})
            if stored_job is None or stored_job.model_dump(mode="json") != \
                    expected.model_dump(mode="json"):
                raise StateError(f"the Redis record of job {job.id} is not what was saved "
                                 "(a changed batch was not named in `touched`?)",
                                 hint="this is a bug in Stepwise")
        job.version += 1
        return job

    def delete(self, job: Job) -> None:
        if (awaited := job.awaited()) is not None:
            self.redis.srem(ci_key(_repo_of(job), awaited.sha), job.id)
        with self.redis.pipeline(transaction=True) as pipe:
            pipe.delete(job_key(job.id), batches_key(job.id), events_key(job.id))
            pipe.zrem(JOBS, job.id)
            index_job(pipe, job.id, None)
            pipe.execute()
        with self._seen_lock:
            self._seen.pop(job.id, None)


def _stored_doc(job_id: str, raw: bytes | str | None) -> dict[str, Any]:
    if raw is None:
        return {}
    try:
        doc = json.loads(raw)
        if not isinstance(doc, dict) or not isinstance(doc.get("version"), int):
            raise ValueError("not a job document")
        return doc
    except (ValueError, TypeError) as exc:
        raise StateError(f"the Redis record of job {job_id} is damaged: {str(exc)[:200]}",
                         hint="restore Redis from its append-only file, or delete the record "
                         "to rebuild the job from GitHub") from None


def _index_ci_wait(pipe: Any, job: Job, before: Awaited | None, after: Awaited | None) -> None:
    """Keep `ci:<repo>@<sha>` (the jobs waiting on that commit's CI: what a feature's part
    awaits, jobs/kernel/record_parts.py) in step with the record, in the save's transaction, so
    a CI webhook finds its jobs with one read."""
    old = before.sha if before is not None else None
    new = after.sha if after is not None else None
    if old == new:
        return
    if old:
        pipe.srem(ci_key(_repo_of(job), old), job.id)
    if new:
        pipe.sadd(ci_key(_repo_of(job), new), job.id)


def _repo_of(job: Job) -> str:
    return job.repo


def log_job_events(job: Job, events: list[Any]) -> None:
    """One log line per saved gate, commit or ending, with the job's ids (the task's delivery
    id is bound by the worker: bot.log_context.with_log_context)."""
    for event in events:
        if event.kind in LOGGED_EVENTS:
            log.info("job %s: %s", event.kind, event.message, extra={
                "job_id": job.id, "repo": job.repo, "issue": job.number, "batch": event.batch,
                "job_event": event.kind, "status": str(job.status),
                "gate_id": job.gate.id if job.gate is not None else None})

