"""Retention of ended jobs: a reconciler pass removes from Redis the jobs that ended more than
STEPWISE_RETAIN_ENDED_DAYS ago (default 90; 0 keeps them forever), with every key that belongs
to them, in one place (`prune`), and leaves a small marker so that the task center, the API and
`stepwise status --server` answer "ended and pruned after N days" instead of "no such job".

What one job owns (bot/plumbing/keys.py): its document, batch hash and event list; its entries in
the job index (`jobs`), the reconciler's sets (`idle:*`), a CI wait set, the running and waiting
lines of its repository and installation; the issue and pull request keys when they still name
it; the metrics' and the comment read-back cursors. Deliveries and comments are deduplicated by
keys that expire by themselves (3 and 30 days). Its commits, comments and pull request stay on
GitHub. A job that still owes GitHub something, or is held by a worker, waits for a later pass.

A pass looks at the jobs created before the cutoff (none ended later than it was created),
READ_PER_PASS documents at a time from a cursor, so its cost does not grow with the jobs kept.
"""

from __future__ import annotations

import json
import logging
from datetime import datetime, timedelta
from typing import Any

import redis
from redis import Redis

from bot.plumbing.connections import as_document, as_text
from bot.plumbing.idle_index import index_job, owes
from bot.plumbing.keys import (
    JOBS,
    RETENTION_CURSOR,
    RETENTION_ROUND,
    batches_key,
    ci_key,
    comments_read_key,
    events_key,
    installation_line,
    issue_key,
    job_key,
    pruned_issue_key,
    pruned_key,
    pull_key,
    seen_key,
    slots_key,
    waiting_key,
)
from bot.plumbing.leases import Lease
from bot.plumbing.pruned import MARKER_TTL_S
from jobs.kernel.model import TERMINAL_JOB_STATUSES
from jobs.kernel.record_parts import awaited_in

log = logging.getLogger(__name__)
READ_PER_PASS = 200  # job documents a pass reads at most
EVERY_S = 600  # a reconciler pass prunes at most this often (one round key for all workers)
HOLDER = "retention"
TERMINAL = frozenset(status.value for status in TERMINAL_JOB_STATUSES)


def due(doc: dict[str, Any], cutoff: datetime) -> bool:
    """Whether a job document is an ended job, owing GitHub nothing, that ended before `cutoff`."""
    if doc.get("status") not in TERMINAL or owes(doc):
        return False
    ended = _time(doc.get("updated_at"))
    return ended is not None and ended < cutoff


def retention_round(connection: Redis, *, retain_days: int, now: datetime,
                    lease_ttl_s: int = 30) -> list[str]:
    """`prune_ended`, unless a pass of any worker did within EVERY_S (the reconciler calls this
    on every pass)."""
    if retain_days <= 0 or not connection.set(RETENTION_ROUND, "1", nx=True, ex=EVERY_S):
        return []
    return prune_ended(connection, retain_days=retain_days, now=now, lease_ttl_s=lease_ttl_s)


def prune_ended(connection: Redis, *, retain_days: int, now: datetime,
                lease_ttl_s: int = 30) -> list[str]:
    """One retention pass: remove the jobs that ended `retain_days` or more before `now`;
    returns their ids. Nothing happens with `retain_days` 0."""
    if retain_days <= 0:
        return []
    cutoff = now - timedelta(days=retain_days)
    raw = connection.get(RETENTION_CURSOR)
    after = float(raw) if raw else float("-inf")
    found: Any = connection.zrangebyscore(JOBS, f"({after}" if raw else "-inf",
                                          cutoff.timestamp(), start=0, num=READ_PER_PASS,
                                          withscores=True)
    if len(found) < READ_PER_PASS:
        connection.delete(RETENTION_CURSOR)  # the next pass starts from the oldest again
    elif found:
        connection.set(RETENTION_CURSOR, repr(found[-1][1]))
    ids = [as_text(member) for member, _score in found]
    docs: Any = connection.mget([job_key(job_id) for job_id in ids]) if ids else []
    pruned = []
    for job_id, raw in zip(ids, docs, strict=True):
        doc = as_document(raw)
        if doc is not None and not due(doc, cutoff):
            continue  # read again, under the lease, only when it may go
        with Lease(connection, job_id, ttl_s=lease_ttl_s, holder=HOLDER) as lease:
            if lease.held and prune(connection, job_id, cutoff=cutoff, now=now,
                                    days=retain_days):
                pruned.append(job_id)
    if pruned:
        log.info("pruned ended jobs", extra={"pruned": len(pruned), "retain_days": retain_days})
    return pruned


def prune(connection: Redis, job_id: str, *, cutoff: datetime, now: datetime, days: int) -> bool:
    """Remove one job and everything that belongs to it in one transaction, if it is still due
    (it may have changed since it was read); True when it was removed."""
    key = job_key(job_id)
    with connection.pipeline(transaction=True) as pipe:
        try:
            pipe.watch(key)  # type: ignore[no-untyped-call]
            doc = as_document(pipe.get(key))
            if doc is None:
                pipe.unwatch()
                connection.zrem(JOBS, job_id)  # an index entry without a record
                return False
            if not due(doc, cutoff):
                return False
            repo, number = str(doc["repo"]), int(doc["number"])
            server = doc.get("server") or {}
            pull = (server.get("pull") or {}).get("number")
            named: dict[str, str | None] = {issue_key(repo, number): pruned_issue_key(repo, number)}
            if pull is not None:
                named[pull_key(repo, int(pull))] = None
            pipe.watch(*named)  # type: ignore[no-untyped-call]
            still_named = [k for k in named if as_text(pipe.get(k)) == job_id]
            pipe.multi()
            pipe.delete(key, batches_key(job_id), events_key(job_id), seen_key(job_id),
                        comments_read_key(job_id))
            pipe.zrem(JOBS, job_id)
            index_job(pipe, job_id, None)
            if (awaited := awaited_in(doc)) is not None:
                pipe.srem(ci_key(repo, awaited.sha), job_id)
            lines = [repo] + ([installation_line(server["installation_id"])]
                              if server.get("installation_id") else [])
            for line in lines:
                pipe.zrem(slots_key(line), job_id)
                pipe.zrem(waiting_key(line), job_id)
            for name in still_named:
                pipe.delete(name)
                marker = named[name]
                if marker is not None:
                    pipe.set(marker, job_id, ex=MARKER_TTL_S)
            pipe.set(pruned_key(job_id), json.dumps({
                "repo": repo, "number": number, "status": doc.get("status"),
                "ended_at": str(doc.get("updated_at")), "pruned_at": now.isoformat(),
                "days": days}), ex=MARKER_TTL_S)
            pipe.execute()
        except redis.WatchError:
            return False  # it changed meanwhile: a later pass looks again
    log.info("pruned an ended job", extra={"job_id": job_id, "repo": repo, "issue": number})
    return True


def _time(value: Any) -> datetime | None:
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return None

