"""What the task center reads: job heads from Redis, status groups, filters and pages.

The list is filtered on each job's head (the stored document without its batches and events);
only the jobs of the page shown are loaded whole, so that their batch counts come from the
recorded batches. Heads of finished jobs never change, so they are cached for a while.
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from collections.abc import Sequence
from datetime import datetime
from enum import StrEnum
from typing import Any

import redis
from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from bot.plumbing.keys import JOBS, job_key
from bot.plumbing.redis_store import RedisStore
from jobs.kernel.job import Batch, Job
from jobs.kernel.model import (
    FEATURE_BATCH_STATUSES,
    FINISHED_BATCH_STATUSES,
    GATES,
    TERMINAL_JOB_STATUSES,
    JobStatus,
    batch_statuses,
)
from jobs.kernel.record_upgrades import without_gate_once_ended

MAX_SCAN = 10_000  # the newest jobs a filtered list looks through
HEAD_CACHE_S = 600.0


class Group(StrEnum):
    """The task center's status filters: what a person wants to know about a job."""

    RUNNING = "running"
    WAITING = "waiting"
    NEEDS_HUMAN = "needs_human"
    FAILED = "failed"
    COMPLETED = "completed"
    CANCELLED = "cancelled"


GROUP_LABELS: dict[Group, str] = {
    Group.RUNNING: "Running",
    Group.WAITING: "Waiting for approval",
    Group.NEEDS_HUMAN: "Needs a human",
    Group.FAILED: "Failed",
    Group.COMPLETED: "Completed",
    Group.CANCELLED: "Cancelled",
}


GROUP_VALUES = frozenset(g.value for g in Group)


class StatusFilter(StrEnum):
    """A group (running, waiting, needs_human, failed, completed, cancelled) or one job status."""

    RUNNING = "running"
    WAITING = "waiting"
    NEEDS_HUMAN = "needs_human"
    FAILED = "failed"
    COMPLETED = "completed"
    CANCELLED = "cancelled"
    QUEUED = "queued"
    PLANNING = "planning"
    AWAITING_HUMAN = "awaiting_human"
    CANCEL_REQUESTED = "cancel_requested"
    INTERRUPTED = "interrupted"


def group_of(status: JobStatus, gate_kind: str | None) -> Group:
    """Running: a worker has it or will; waiting: a decision gate (exit 3); needs a human:
    a gate that needs someone to fix or look (exit 4)."""
    if status is JobStatus.AWAITING_HUMAN:
        rule = GATES.get(gate_kind or "")
        return Group.WAITING if rule is not None and rule.exit_code == 3 else Group.NEEDS_HUMAN
    return {JobStatus.FAILED: Group.FAILED, JobStatus.COMPLETED: Group.COMPLETED,
            JobStatus.CANCELLED: Group.CANCELLED}.get(status, Group.RUNNING)


class GateHead(BaseModel):
    model_config = ConfigDict(extra="ignore")

    id: str
    kind: str
    reason: str = ""
    opened_at: datetime | None = None
    batch: int | None = None
    milestone: int | None = None


class JobHead(BaseModel):
    """The fields of a stored job document the list filters and shows."""

    model_config = ConfigDict(extra="ignore")

    id: str
    number: int
    title: str
    repo: str
    status: JobStatus
    version: int = 0
    created_at: datetime
    updated_at: datetime
    branch: str = ""
    gate: GateHead | None = None
    extra: dict[str, Any] = {}

    @model_validator(mode="before")
    @classmethod
    def _no_gate_once_ended(cls, data: Any) -> Any:
        return without_gate_once_ended(data)  # a record saved with a stale gate

    @property
    def group(self) -> Group:
        return group_of(self.status, self.gate.kind if self.gate else None)

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL_JOB_STATUSES


class Filters(BaseModel):
    status: StatusFilter | None = None
    repo: str | None = None
    q: str | None = None

    def matches(self, head: JobHead, *, ignore_status: bool = False) -> bool:
        if self.status is not None and not ignore_status:
            if self.status.value in GROUP_VALUES:
                if head.group.value != self.status.value:
                    return False
            elif head.status.value != self.status.value:
                return False
        if self.repo and head.repo.lower() != self.repo.strip().lower():
            return False
        if self.q and self.q.strip():
            haystack = " ".join([head.title, head.repo, f"#{head.number}", head.id, head.branch,
                                 head.status.value, head.gate.kind if head.gate else ""]).lower()
            return all(word in haystack for word in self.q.lower().split())
        return True


class HeadCache:
    """Heads of finished jobs, which do not change, kept for HEAD_CACHE_S (one per web app)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._heads: dict[str, tuple[float, JobHead]] = {}

    def heads(self, connection: redis.Redis, ids: list[str]) -> list[JobHead]:
        now = time.monotonic()
        with self._lock:
            cached = {i: h for i, (at, h) in self._heads.items() if now - at < HEAD_CACHE_S}
        wanted = [i for i in ids if i not in cached]
        fetched: dict[str, JobHead] = {}
        for start in range(0, len(wanted), 500):
            chunk = wanted[start:start + 500]
            docs = connection.mget([job_key(i) for i in chunk])
            for job_id, raw in zip(chunk, docs, strict=True):
                head = parse_head(raw)
                if head is not None:
                    fetched[job_id] = head
        with self._lock:
            self._heads = {i: (at, h) for i, (at, h) in self._heads.items()
                           if now - at < HEAD_CACHE_S}
            self._heads.update({i: (now, h) for i, h in fetched.items() if h.terminal})
        found = {**cached, **fetched}
        return [found[i] for i in ids if i in found]


def parse_head(raw: Any) -> JobHead | None:
    """A head from a stored document; a damaged document is left out of lists (its page says why)."""
    if raw is None:
        return None
    try:
        return JobHead.model_validate(json.loads(raw))
    except (ValueError, ValidationError):
        return None


def all_job_ids(connection: redis.Redis, limit: int = MAX_SCAN) -> list[str]:
    items = connection.zrevrange(JOBS, 0, limit - 1)
    return [i.decode() if isinstance(i, bytes) else str(i) for i in items]


class Listing(BaseModel):
    """One page of the filtered list, with the counts the filter bar shows."""

    heads: list[JobHead]
    total: int
    page: int
    per_page: int
    group_counts: dict[str, int]
    repos: list[str]
    truncated: bool

    @property
    def pages(self) -> int:
        return max(1, -(-self.total // self.per_page))


def list_heads(connection: redis.Redis, cache: HeadCache, filters: Filters, *,
               page: int = 1, per_page: int = 25) -> Listing:
    ids = all_job_ids(connection, MAX_SCAN + 1)
    truncated = len(ids) > MAX_SCAN
    heads = cache.heads(connection, ids[:MAX_SCAN])
    counts = Counter(h.group.value for h in heads if filters.matches(h, ignore_status=True))
    chosen = [h for h in heads if filters.matches(h)]
    start = (page - 1) * per_page
    return Listing(heads=chosen[start:start + per_page], total=len(chosen), page=page,
                   per_page=per_page, group_counts={g.value: counts.get(g.value, 0) for g in Group},
                   repos=sorted({h.repo for h in heads}), truncated=truncated)


# -- progress from the record -------------------------------------------------------------------
class BatchCounts(BaseModel):
    """Counts of the recorded batches by status; `done` = completed + skipped + reverted. An
    installed feature's status is counted under its word too (CI: `awaiting_ci`), an extra
    field: `features()` lists those under the words a page shows."""

    model_config = ConfigDict(extra="allow")

    total: int = 0
    done: int = 0
    pending: int = 0
    in_progress: int = 0
    completed: int = 0
    failed: int = 0
    skipped: int = 0
    reverted: int = 0

    def features(self) -> dict[str, int]:
        """The installed features' statuses, by the words their row shows a count under, and
        their counts ("awaiting CI": 1)."""
        return {_shown(word): int(count) for word, count in (self.model_extra or {}).items()}


def _shown(word: str) -> str:
    row = FEATURE_BATCH_STATUSES.get(word)
    return row.shown if row is not None else word


def batch_counts(batches: Sequence[Batch]) -> BatchCounts:
    tally = Counter(b.status for b in batches)
    return BatchCounts(total=len(batches),
                       done=sum(tally[s] for s in FINISHED_BATCH_STATUSES),
                       **{s.value: tally[s] for s in batch_statuses()})


def load_jobs(store: RedisStore, heads: list[JobHead]) -> list[Job]:
    """The page's jobs, loaded whole (a job deleted meanwhile is left out)."""
    jobs = [store.load_id(h.id) for h in heads]
    return [j for j in jobs if j is not None]
