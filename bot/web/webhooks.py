"""The webhook path: verify the signature, parse (a payload of its event's shape), normalise, dedupe the
delivery (by id, then by body), enqueue. Nothing else."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Annotated, Any

import redis
from fastapi import APIRouter, Depends, Header, Request
from fastapi.responses import JSONResponse
from githubkit.webhooks import verify

from bot.commands.spec import PREFIX
from bot.events import Event, Kind, MalformedPayloadError, normalise
from bot.observability.metrics import counted_delivery
from bot.plumbing.keys import (
    INSTALLATIONS_LOG,
    delivery_key,
    event_lease,
    event_task_id,
    installation_key,
    removed_key,
)
from bot.plumbing.queue import enqueue_new, requeue, task_abandoned
from bot.plumbing.suspension_marks import SUSPEND, UNSUSPEND, is_suspended
from bot.plumbing.trigger_labels import forget_trigger_label
from bot.web import replays
from bot.web.noops import noop_reason
from bot.web.payload_shapes import shape_problem
from bot.web.redis_deadline import RedisDeadlineExceeded, RedisLane
from bot.web.webhook_body import (
    MAX_PAYLOAD_BYTES,
    BodyBudget,
    ReceivedBody,
    decode_payload,
    read_capped,
)

RETRY_AFTER_S = 30  # what a 503 asks a client to wait
DELIVERY_TTL_S = 3 * 24 * 3600  # GitHub lets a delivery be redelivered for three days
INSTALLATION_TASKS = ("installation.deleted", "installation_repositories.removed",  # end jobs
                      SUSPEND, UNSUSPEND)  # park or resume them
log = logging.getLogger(__name__)
router = APIRouter()
__all__ = ["MAX_PAYLOAD_BYTES", "router"]


async def raw_body(request: Request) -> AsyncIterator[ReceivedBody]:
    """The body, refused by its declared length and read with a cap before anything else,
    within the process's body budget (given back once the request is answered)."""
    budget: BodyBudget = request.app.state.body_budget
    received = await read_capped(request, limit=request.app.state.max_payload_bytes,
                                 budget=budget)
    try:
        yield received
    finally:
        budget.give(received.held)


def answer(status: int, outcome: str, **extra: Any) -> JSONResponse:
    return JSONResponse({"status": outcome, **extra}, status_code=status)


def wants_worker(event: Event, app_slug: str) -> bool:
    """Cheap filters so the queue only sees deliveries that may matter."""
    if event.kind is Kind.INSTALLATION:
        return event.reason in INSTALLATION_TASKS
    if event.kind is Kind.IGNORED:
        return False
    if event.kind is Kind.COMMENT:
        lowered = event.body.lower()
        return not event.sender_is_bot and (PREFIX in lowered or f"@{app_slug}" in lowered)
    if event.kind is Kind.CI:  # what Stepwise's own check runs report wakes nothing
        return event.check_app != app_slug
    if event.kind is Kind.CHECK_RERUN:  # "Re-run" on one of Stepwise's own runs only
        return event.check_app == app_slug
    # Only the App's own pushes are its own: another bot's push is someone else's commit.
    return not (event.kind is Kind.PUSH and event.sender.casefold() == f"{app_slug}[bot]")


def suspended_installation(connection: redis.Redis, event: Event) -> bool:
    """Whether the delivery's installation is suspended (Redis down: the enqueue says so)."""
    try:
        return is_suspended(connection, event.installation_id)
    except redis.RedisError:
        return False


def record_installation(connection: redis.Redis, event: Event) -> None:
    """What the App knows of an installation: its account and the last action with its time
    (GitHub sends installation events to every App; nothing else is needed to keep them)."""
    try:
        key = installation_key(event.installation_id)
        connection.hset(key, mapping={"account": event.account, "action": event.reason,
                                      "repos": ",".join(event.repos)[:10_000],
                                      "delivery": event.delivery_id})
        connection.rpush(INSTALLATIONS_LOG,
                         f"{event.installation_id} {event.account} {event.reason}")
        connection.ltrim(INSTALLATIONS_LOG, -1000, -1)
        if event.reason == "installation_repositories.added" and event.repos:
            # Added back after a removal: its clone may be made again (bot/server/context.py).
            connection.delete(*(removed_key(event.installation_id, repo) for repo in event.repos))
    except redis.RedisError:
        log.warning("could not record an installation event", extra={"action": event.reason})


def signature_ok(secrets: str | tuple[str, ...], body: bytes, signature: str) -> bool:
    """HMAC-SHA256 of the raw body with one of the accepted secrets (the current one, and the
    previous one during a rotation); anything else (SHA-1, no prefix, odd bytes) is refused."""
    if not signature.startswith("sha256=") or not signature.isascii():
        return False
    candidates = (secrets,) if isinstance(secrets, str) else secrets
    try:  # every candidate is checked, so the time taken does not tell which one matched
        matches = [bool(verify(secret, body, signature)) for secret in candidates]
    except (TypeError, ValueError):
        return False
    return any(matches)


@router.post("/webhooks/github", status_code=202)
@counted_delivery  # deliveries by event and outcome, acknowledgement latency (after the answer)
async def receive_webhook(
    request: Request,
    received: Annotated[ReceivedBody, Depends(raw_body)],
    x_hub_signature_256: Annotated[str | None, Header()] = None,
    x_github_event: Annotated[str | None, Header()] = None,
    x_github_delivery: Annotated[str | None, Header()] = None,
    content_type: Annotated[str | None, Header()] = None,
) -> JSONResponse:
    """Acknowledge a GitHub delivery in milliseconds; the work happens on a worker.

    Verify and parse on the event loop (no I/O), then hand the delivery's Redis work to the
    webhook lane (bot/web/redis_deadline.py): a hung Redis costs a 503 after the deadline, never
    a stalled process."""
    if received.status == 401:
        return answer(401, "invalid signature", hint="check STEPWISE_WEBHOOK_SECRET")
    if received.status == 503:  # the body budget is spent by other deliveries right now
        busy = answer(503, received.problem)
        busy.headers["Retry-After"] = str(RETRY_AFTER_S)
        return busy
    if received.problem:
        return answer(received.status, received.problem)
    secrets: tuple[str, ...] = request.app.state.webhook_secrets
    body = received.data
    if not signature_ok(secrets, body, x_hub_signature_256 or ""):
        return answer(401, "invalid signature", hint="check STEPWISE_WEBHOOK_SECRET")
    if not x_github_event or not x_github_delivery:
        return answer(400, "missing X-GitHub-Event or X-GitHub-Delivery header")
    try:
        payload = decode_payload(body, content_type)
        if problem := shape_problem(x_github_event, payload):  # a body sent as another event
            return answer(400, "payload does not match its event", problem=problem)
        event = normalise(x_github_event, x_github_delivery[:100], payload)
    except (ValueError, RecursionError, MalformedPayloadError) as exc:
        return answer(400, "malformed payload", problem=str(exc)[:200])
    extra = {"event": x_github_event, "delivery": event.delivery_id}
    lane: RedisLane = request.app.state.webhook_lane
    try:  # every Redis call of the delivery, off the event loop, under one deadline
        return await lane.run(route_delivery, request.app.state.redis, event,
                              request.app.state.app_slug, extra, replays.body_digest(body))
    except (redis.RedisError, RedisDeadlineExceeded) as exc:  # down or hung: never a 500
        log.warning("Redis is unavailable: the delivery was not queued (GitHub's redelivery, "
                    "or the reconciler's, queues it once Redis is back)",
                    extra={**extra, "error": type(exc).__name__})
        return queue_unavailable()


def route_delivery(connection: redis.Redis, event: Event, app_slug: str,
                   extra: dict[str, Any], digest: str) -> JSONResponse:
    """What a verified, parsed delivery needs from Redis: installation bookkeeping, the
    suspension and no-op filters, then the dedupe and the enqueue (a Redis error propagates
    from the enqueue; the filters fail open so the enqueue reports it)."""
    if event.kind is Kind.INSTALLATION:
        log.info("installation event", extra={**extra, "action": event.reason,
                                              "installation_id": event.installation_id,
                                              "account": event.account})
        record_installation(connection, event)  # marked suspended once GitHub confirms it
    elif suspended_installation(connection, event):
        log.info("delivery ignored: the App's installation is suspended", extra={
            **extra, "installation_id": event.installation_id})
        return answer(202, "ignored", reason="installation suspended")
    if event.config_changed:  # the trigger label the no-op filter knows may be stale now
        with contextlib.suppress(redis.RedisError):
            forget_trigger_label(connection, event.repo)
    if not wants_worker(event, app_slug):
        return answer(202, "ignored", reason=event.reason or event.kind.value)
    try:
        reason = noop_reason(event, connection)
    except redis.RedisError:
        reason = ""  # the enqueue below reports Redis being down
    if reason:
        return answer(202, "ignored", reason=reason)
    return enqueue_delivery(connection, event, extra, digest=digest)


def queue_unavailable() -> JSONResponse:
    """503 with Retry-After and the error code `queue_unavailable` (counted in
    stepwise_webhook_deliveries_total{outcome="queue_unavailable"})."""
    response = answer(503, "queue unavailable", error="queue_unavailable",
                      hint="Redis is unavailable; redeliver the delivery once it is back")
    response.headers["Retry-After"] = str(RETRY_AFTER_S)
    return response


def enqueue_delivery(connection: redis.Redis, event: Event, extra: dict[str, Any], *,
                     digest: str) -> JSONResponse:
    """Dedupe the delivery by its id, then by its body's digest (a replay under a new id), and
    queue its task (a Redis error propagates)."""
    key = delivery_key(event.delivery_id)
    task_id = event_task_id(event.delivery_id)
    if not connection.set(key, "1", nx=True, ex=DELIVERY_TTL_S):
        # A redelivery of a delivery whose worker died (or whose task failed) is taken again.
        if task_abandoned(connection, task_id, lease=event_lease(event.delivery_id)):
            requeue(connection, task_id)
            return answer(202, "requeued")
        return answer(202, "duplicate")
    if not replays.first_time(connection, digest):
        log.warning("delivery refused: its body was delivered before under another id",
                    extra=extra)
        return answer(202, "duplicate", reason="replayed body")
    # Fields at their defaults are left out: a worker of the previous release, whose event
    # model forbids fields it does not know, still runs the task (docs/operating.md, Upgrading).
    try:  # the dedupe key proves the id is new: one more round trip queues it
        # Only the fields this delivery sets: a field added later (and left at its default)
        # never reaches an older worker that would refuse it, mid rolling upgrade.
        with connection.pipeline(transaction=True) as pipe:
            enqueue_new(pipe, connection, "event", event.model_dump(mode="json", exclude_defaults=True),
                        job_id=task_id)
            pipe.execute()
    except Exception as exc:
        with contextlib.suppress(redis.RedisError):
            connection.delete(key)  # let GitHub's redelivery try again
            replays.forget(connection, digest)
        log.warning("could not enqueue a delivery", extra={**extra, "error": type(exc).__name__})
        return queue_unavailable()
    log.info("delivery accepted", extra={**extra, "task": task_id})
    return answer(202, "queued")
