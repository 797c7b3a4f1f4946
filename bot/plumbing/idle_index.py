"""Which jobs a reconciler pass must look at, kept as Redis sets by every save, so that a pass
reads the documents of the jobs it works on, not of every job there is.

Four kinds, each a set of job ids (`stepwise:idle:<kind>`): `owing`, a job no worker holds
(waiting, ended, or waiting for CI) that owes GitHub something; `gate`, a job waiting at a
gate, whose comments a pass reads back; `ci`, a job waiting for the repository's CI; `active`,
a job queued or running its steps, whose comments a pass reads back too (a command posted
while a step ran, whose webhook was lost, is applied after that step, not at the next gate). The
store updates them in the same transaction as the job's document (`index_job`), so they never
disagree with a saved record; sets from before this index existed are built once from the
documents (`members`). A pass that finds a member no longer belongs removes it
(`still_members`).
"""

from __future__ import annotations

from typing import Any

from redis import Redis

from bot.plumbing.connections import as_document, as_text
from bot.plumbing.keys import JOBS, idle_key, job_key
from jobs.kernel.model import ACTIVE_JOB_STATUSES, JobStatus
from jobs.kernel.record_parts import awaited_in

OWING, GATE, CI, ACTIVE = "owing", "gate", "ci", "active"
KINDS = (OWING, GATE, CI, ACTIVE)
INDEXED_KEY = idle_key("indexed")
SET_KEYS = {kind: idle_key(kind) for kind in KINDS}  # named once: every save writes them
BUILD_CHUNK = 200  # documents per pipelined round trip when the sets are first built


def owes(doc: dict[str, Any]) -> bool:
    """Whether a job document still owes GitHub something: an outbox entry, or a gate whose
    comment was never confirmed (a worker died between opening it and owing it)."""
    gate = doc.get("gate")
    unshown = isinstance(gate, dict) and not gate.get("shown_at")
    server = doc.get("server") or {}
    return bool(doc.get("outbox")) or (unshown and bool(server.get("installation_id")))


def kinds_of(doc: dict[str, Any]) -> set[str]:
    """The sets a job document belongs in (`active` only for a queued or running job, none for
    an ended one owing nothing)."""
    status = doc.get("status", JobStatus.QUEUED)
    # running but waiting outside (a feature's part awaits CI's verdict): no worker holds it
    waiting_for_ci = status == JobStatus.RUNNING and awaited_in(doc) is not None
    if status in ACTIVE_JOB_STATUSES and not waiting_for_ci:
        return {ACTIVE}
    kinds = {OWING} if owes(doc) else set()
    if status == JobStatus.AWAITING_HUMAN:
        kinds.add(GATE)
    if waiting_for_ci:
        kinds.add(CI)
    return kinds


def index_job(pipe: Any, job_id: str, doc: dict[str, Any] | None) -> None:
    """Queue on `pipe` (a save's or a delete's transaction) the set changes for `doc`; None
    removes the job from every set."""
    kinds = kinds_of(doc) if doc is not None else set()
    for kind in KINDS:
        if kind in kinds:
            pipe.sadd(SET_KEYS[kind], job_id)
        else:
            pipe.srem(SET_KEYS[kind], job_id)


def members(redis: Redis, kind: str) -> list[str]:
    """The job ids in one set, sorted; the sets are built first if they never were."""
    if not redis.exists(INDEXED_KEY):
        build(redis)
    found: Any = redis.smembers(SET_KEYS[kind])
    return sorted(as_text(item) for item in found if isinstance(item, bytes | str))


def still_members(redis: Redis, kind: str, job_ids: list[str],
                  docs: dict[str, dict[str, Any]]) -> list[str]:
    """Those of `job_ids` (members a pass took) whose document in `docs` still belongs in
    `kind`; the others (no document, or one that says otherwise) leave the set."""
    kept = [job_id for job_id in job_ids if kind in kinds_of(docs.get(job_id, {}))]
    stale = [job_id for job_id in job_ids if job_id not in kept]
    if stale:
        redis.srem(SET_KEYS[kind], *stale)
    return kept


def build(redis: Redis) -> int:
    """Fill the sets from every job document (records saved before the index existed); the
    marker is set first, so saves meanwhile keep them right and a member added from a
    document read just before its save is removed by the pass that finds it stale
    (`still_members`)."""
    redis.set(INDEXED_KEY, "1")
    ranked: Any = redis.zrange(JOBS, 0, -1)
    ids = [as_text(item) for item in ranked if isinstance(item, bytes | str)]
    for start in range(0, len(ids), BUILD_CHUNK):
        chunk = ids[start:start + BUILD_CHUNK]
        raws: Any = redis.mget([job_key(job_id) for job_id in chunk])
        pipe = redis.pipeline(transaction=False)
        for job_id, raw in zip(chunk, raws, strict=True):
            doc = as_document(raw)
            if doc is not None:
                for kind in kinds_of(doc):
                    pipe.sadd(SET_KEYS[kind], job_id)
        pipe.execute()
    return len(ids)


