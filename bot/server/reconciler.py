"""The reconciler: publishes what jobs still owe GitHub, and reads back the commands of
waiting and running jobs whose webhooks never came (GitHub does not redeliver a lost webhook
by itself).

Every worker's reaper thread queues a pass (the `reconcile` task, run by a worker like a step)
every STEPWISE_RECONCILE_INTERVAL_S, one per interval (a round lock in Redis). A pass takes the
jobs it may work on from the sets every save keeps (bot/plumbing/idle_index.py: jobs no worker
holds that owe GitHub something, wait at a gate, or wait for CI) and reads the documents of
those it works on only, so its cost does not grow with the jobs there are. Each job is handled
under its lease, so a pass never races a step; the cost of a pass is bounded by
MAX_JOBS_PER_PASS and, for reading comments back, by PASS_BUDGET_S; the jobs take turns
(`take_turns`): with 1,000 waiting jobs every one's comments are read within a few dozen
passes.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from redis import Redis

from bot.events import Event, Kind
from bot.log_context import RECONCILED_PREFIX, traced
from bot.plumbing import idle_index
from bot.plumbing.connections import as_document
from bot.plumbing.keys import (
    RECONCILE_ROUND,
    comment_key,
    comments_read_key,
    event_task_id,
    job_key,
    reconcile_cursor_key,
    reconcile_task_id,
)
from bot.plumbing.leases import Lease
from bot.plumbing.queue import enqueue
from bot.plumbing.suspension_marks import is_suspended
from bot.server import ci_poll, plugs
from bot.server.context import ServerContext
from bot.server.redeliveries import redeliver_failed
from bot.server.retention import retention_round
from bot.server.steps import RECONCILER, queue_next_step
from jobs.adapters.store import ConflictError
from jobs.basics.errors import StepwiseError
from jobs.kernel.job import OpenGate
from jobs.kernel.records import ServerState
from jobs.ports import Publication

log = logging.getLogger(__name__)
READ_CHUNK = 200  # job documents per pipelined round trip
MAX_JOBS_PER_PASS = 50  # jobs published to (or whose comments are read) per pass
PASS_BUDGET_S = 1.5  # comments are read back until a pass has run this long; the next goes on
COMMENT_GRACE_S = 30.0  # a command comment younger than this may still have its webhook coming
CURSOR_TTL_S = 90 * 24 * 3600


@dataclass
class Pass:
    """What one pass did (for logs and tests)."""

    scanned: int = 0
    published: list[str] = field(default_factory=list)  # job ids whose outbox is now empty
    still_owed: list[str] = field(default_factory=list)
    commands: list[int] = field(default_factory=list)  # comment ids queued for handling


def read_documents(redis: Redis, job_ids: list[str]) -> dict[str, dict[str, Any]]:
    """The job documents (without batches and events), READ_CHUNK per round trip."""
    found: dict[str, dict[str, Any]] = {}
    for start in range(0, len(job_ids), READ_CHUNK):
        chunk = job_ids[start:start + READ_CHUNK]
        pipe = redis.pipeline(transaction=False)
        for job_id in chunk:
            pipe.get(job_key(job_id))
        for job_id, raw in zip(chunk, pipe.execute(), strict=True):
            if (doc := as_document(raw)) is not None:
                found[job_id] = doc
    return found


def reconcile(ctx: ServerContext, *, comment_grace_s: float = COMMENT_GRACE_S) -> Pass:
    """One pass: publish what jobs no worker holds owe, then read the comments of jobs at a
    shown gate, then of jobs waiting for CI, then of jobs queued or running their steps, for
    commands nobody handled (written at least `comment_grace_s` ago: a webhook still on its
    way is not a lost one)."""
    result = Pass()
    deadline = time.monotonic() + PASS_BUDGET_S
    redis = ctx.redis
    waiting_ci = read_documents(redis, idle_index.members(redis, idle_index.CI))
    ci_poll.poll_ci_waits(ctx, waiting_ci)  # jobs waiting for CI whose webhook may have been missed
    chosen = take_turns(redis, "owing", idle_index.members(redis, idle_index.OWING),
                        MAX_JOBS_PER_PASS)
    owing_docs = read_documents(redis, chosen)
    owing = idle_index.still_members(redis, idle_index.OWING, chosen, owing_docs)
    for job_id in owing:
        publish_owed(ctx, job_id, result)
    published = set(owing)
    chosen = take_turns(redis, "waiting", [i for i in idle_index.members(redis, idle_index.GATE)
                                           if i not in published],
                        MAX_JOBS_PER_PASS - len(owing), move=False)
    docs = read_documents(redis, chosen)
    result.scanned = len(waiting_ci) + len(owing_docs) + len(docs)
    at_gates = idle_index.still_members(redis, idle_index.GATE, chosen, docs)
    _read_back(ctx, result, "waiting", at_gates, docs, deadline=deadline, grace_s=comment_grace_s,
               first_always=True)
    # Jobs waiting for CI are idle too: a `cancel` posted while no webhook came is read back.
    ci_jobs = take_turns(redis, "ci-comments", list(waiting_ci), MAX_JOBS_PER_PASS, move=False)
    _read_back(ctx, result, "ci-comments", ci_jobs, waiting_ci, deadline=deadline,
               grace_s=comment_grace_s)
    # Jobs queued or running their steps: a command whose webhook was lost while a step ran is
    # handled as its webhook would have been, not left until the job next waits at a gate.
    chosen = take_turns(redis, "active-comments", idle_index.members(redis, idle_index.ACTIVE),
                        MAX_JOBS_PER_PASS, move=False)
    active_docs = read_documents(redis, chosen)
    result.scanned += len(active_docs)
    active = idle_index.still_members(redis, idle_index.ACTIVE, chosen, active_docs)
    _read_back(ctx, result, "active-comments", active, active_docs, deadline=deadline,
               grace_s=comment_grace_s)
    return result


def _read_back(ctx: ServerContext, result: Pass, kind: str, job_ids: list[str],
               docs: dict[str, dict[str, Any]], *, deadline: float, grace_s: float,
               first_always: bool = False) -> None:
    """Queue the unhandled commands of `job_ids` in turn until the pass's `deadline` (the
    first job even past it with `first_always`); each job read takes its turn of `kind`."""
    for number, job_id in enumerate(job_ids):
        if time.monotonic() > deadline and not (first_always and number == 0):
            break  # the rest wait for the next pass, which starts after the last one read
        try:
            result.commands += unhandled_commands(ctx, job_id, grace_s=grace_s,
                                                  doc=docs[job_id])
        except StepwiseError as exc:
            log.warning("could not read a job's comments", extra={"job_id": job_id,
                                                                   "code": exc.code})
        took_turn(ctx.redis, kind, job_id)


def take_turns(redis: Redis, kind: str, job_ids: list[str], count: int, *,
               move: bool = True) -> list[str]:
    """The next `count` of `job_ids` after the last one a pass took (in id order, wrapping
    round), so that every job gets its turn across passes however many there are; without
    `move`, the caller says which it took (`took_turn`)."""
    if count <= 0 or not job_ids:
        return []
    key = reconcile_cursor_key(kind)
    raw = redis.get(key)
    after = raw.decode() if isinstance(raw, bytes) else str(raw or "")
    ordered = sorted(job_ids)
    first = next((n for n, job_id in enumerate(ordered) if job_id > after), 0)
    chosen = (ordered[first:] + ordered[:first])[:count]
    if move:
        took_turn(redis, kind, chosen[-1])
    return chosen


def took_turn(redis: Redis, kind: str, job_id: str) -> None:
    redis.set(reconcile_cursor_key(kind), job_id)


def limited_now(ctx: ServerContext, installation_id: int) -> bool:
    """Whether GitHub rate-limited the installation and the limit is not over (no request is
    sent for it meanwhile: bot/github/limited.py)."""
    limited = ctx.github.limited
    return limited is not None and limited.until(str(installation_id)) > limited.clock()


def publish_owed(ctx: ServerContext, job_id: str, result: Pass) -> None:
    with Lease(ctx.redis, job_id, ttl_s=ctx.settings.lease_ttl_s, holder=RECONCILER) as lease:
        if not lease.held:
            return  # a step holds it and publishes by itself
        job = ctx.store.load_id(job_id)
        if job is None or job.is_active or job.server.installation_id is None:
            return
        if is_suspended(ctx.redis, job.server.installation_id) or limited_now(
                ctx, job.server.installation_id):  # no call until unsuspended, or the limit ends
            result.still_owed.append(job_id)
            return
        forge = ctx.forge(ctx.installation(job.server.installation()), job.repo)
        if job.gate is not None and job.gate.shown_at is None:
            forge.expect(job, Publication.GATE)  # owed, whether or not it was recorded
        try:
            left = forge.deliver_all(job)
            ctx.store.save(job)
        except ConflictError:
            left = 1  # someone answered the gate meanwhile; the next pass looks again
        except StepwiseError as exc:
            log.warning("could not publish a job's outbox", extra={"job_id": job_id,
                                                                    "code": exc.code})
            left = 1
        (result.still_owed if left else result.published).append(job_id)
    latest = ctx.store.load_id(job_id)
    if latest is not None and latest.is_active:
        queue_next_step(ctx, latest)  # a command came while the lease was ours: go on


def unhandled_commands(ctx: ServerContext, job_id: str, *, grace_s: float,
                       doc: dict[str, Any] | None = None) -> list[int]:
    """Queue the command comments on a job that no webhook brought (their progress key
    is missing); returns their ids. Every comment since the last one this read-back went past
    is covered (a per-job cursor, `comments_read_key`, listed with `since=`), not only those
    since the gate opened: a `cancel` posted while Redis or the worker was away counts too.
    Only a comment whose body is unchanged since it was written is applied; an edited one is
    never attributed to its author (docs/security.md). `doc`, the job's document the pass
    already read, spares loading the whole record."""
    facts = _idle_facts(doc) if doc is not None else None
    if facts is None:
        job = ctx.store.load_id(job_id)
        if job is None:
            return []
        facts = (job.repo, job.number, job.server, job.gate, job.created_at)
    repo, job_number, server, gate, created = facts
    if (gate is not None and gate.shown_at is None) or server.installation_id is None or \
            is_suspended(ctx.redis, server.installation_id):
        return []
    from bot.commands import parse_comment

    client = ctx.installation(server.installation())
    owner, name = repo.split("/", 1)
    threads = [job_number] + ([server.pull.number] if server.pull is not None else [])
    cursor = _cursor(ctx, job_id) or created.replace(microsecond=0)
    now, passed, queued = ctx.clock(), cursor, []
    for number in threads:
        for comment in client.comments(owner, name, number, since=cursor):
            written = _time(comment.created_at)
            if written is None or written < cursor or comment.is_bot:
                continue
            if (now - written).total_seconds() < grace_s:
                continue  # its webhook may still come; the cursor stays before it
            passed = max(passed, written)
            if ctx.redis.exists(comment_key(comment.id)) or \
                    not parse_comment(comment.body, app_slug=ctx.settings.app_slug):
                continue
            if comment.updated_at != comment.created_at:
                log.warning("an edited command comment is not applied", extra={
                    "job_id": job_id, "comment_id": comment.id})
                continue
            event = Event(kind=Kind.COMMENT, delivery_id=f"{RECONCILED_PREFIX}{comment.id}",
                          repo=repo, installation_id=server.installation(),
                          number=number, sender=comment.author,
                          sender_id=comment.author_id, body=comment.body,
                          comment_id=comment.id, created_at=comment.created_at,
                          is_pull_request=number != job_number)
            enqueue(ctx.redis, "event", event.model_dump(mode="json", exclude_defaults=True),
                    job_id=event_task_id(event.delivery_id))
            queued.append(comment.id)
    ctx.redis.set(comments_read_key(job_id), passed.isoformat(), ex=CURSOR_TTL_S)
    if queued:
        log.warning("commands without a webhook; handling them now",
                    extra={"job_id": job_id, "comments": queued})
    return queued


def _cursor(ctx: ServerContext, job_id: str) -> datetime | None:
    raw = ctx.redis.get(comments_read_key(job_id))
    return _time(raw.decode() if isinstance(raw, bytes) else raw) if raw else None


def _time(value: str | None) -> datetime | None:
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return None


def _idle_facts(doc: dict[str, Any]
                ) -> tuple[str, int, ServerState, OpenGate | None, datetime] | None:
    """(repo, issue number, server state, gate or None, creation time) from a job document;
    None if it lacks one."""
    try:
        gate = OpenGate.model_validate(doc["gate"]) if doc.get("gate") else None
        server = ServerState.model_validate(doc.get("server") or {})
        created = datetime.fromisoformat(str(doc["created_at"]).replace("Z", "+00:00"))
        return str(doc["repo"]), int(doc["number"]), server, gate, created
    except (KeyError, TypeError, ValueError):
        return None


def _older(created_at: str, now: datetime, seconds: float) -> bool:
    try:
        created = datetime.fromisoformat(created_at.replace("Z", "+00:00"))
    except ValueError:
        return False
    return (now - created).total_seconds() >= seconds


def run_pass(ctx: ServerContext) -> None:
    """The `reconcile` task: the jobs, the plugs' passes (bot/server/plugs.py: the running
    campaigns ticked), then retention (ended jobs past STEPWISE_RETAIN_ENDED_DAYS leave Redis:
    bot/server/retention.py). What it queues logs `delivery_id: null, trigger: reconciler`
    (no webhook started it)."""
    with traced(None, "reconciler"):
        result = reconcile(ctx)
        try:  # deliveries GitHub could not make (a web restart): asked again
            redeliver_failed(ctx)
        except Exception:  # GitHub or Redis trouble: the next pass tries again
            log.warning("could not look for failed deliveries", exc_info=True)
        for plug in plugs.PLUGS:
            plug.reconcile(ctx)
        retention_round(ctx.redis, retain_days=ctx.settings.retain_ended_days, now=ctx.clock(),
                        lease_ttl_s=ctx.settings.lease_ttl_s)
        if result.published or result.still_owed or result.commands:
            log.info("reconciler pass", extra={"published": len(result.published),
                                               "still_owed": len(result.still_owed),
                                               "commands": len(result.commands)})


def reconcile_round(ctx: ServerContext) -> bool:
    """Queue a pass (the `reconcile` task), unless another worker did within the interval.
    The pass runs in a work horse like every step, never in the reaper's thread: GitHub calls
    there would hold the client's locks while RQ forks horses from that process."""
    interval = ctx.settings.reconcile_interval_s
    if not ctx.redis.set(RECONCILE_ROUND, "1", nx=True, ex=interval):
        return False
    with traced(None, "reconciler"):
        enqueue(ctx.redis, "reconcile", {}, retry=False, job_id=reconcile_task_id())
    return True


def next_round_in(redis: Redis, interval_s: float) -> float:
    """Seconds until a pass may be queued again (the round another worker queued ends): the
    reaper tries then, so passes start one interval apart, never two (a worker trying every
    interval on its own clock would just miss the round's end half the time)."""
    left_ms = redis.pttl(RECONCILE_ROUND)
    if isinstance(left_ms, int) and left_ms >= 0:
        return left_ms / 1000
    return 0.0 if left_ms == -2 else float(interval_s)  # -2: no round now; -1: no end (never)
