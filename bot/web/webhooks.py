"""The webhook path: verify the signature, parse, normalise, dedupe the delivery, enqueue. Nothing else."""

from __future__ import annotations

import json
import logging
from typing import Annotated, Any

import redis
from fastapi import APIRouter, Depends, Header, Request
from fastapi.responses import JSONResponse
from githubkit.webhooks import verify

from bot.commands.spec import PREFIX
from bot.events import Event, Kind, MalformedPayloadError, normalise
from bot.observability.metrics import counted_delivery
from bot.server.keys import delivery_key
from bot.server.worker import enqueue_new, event_lease, requeue, rq_id, task_abandoned

DELIVERY_TTL_S = 3 * 24 * 3600  # GitHub lets a delivery be redelivered for three days
MAX_PAYLOAD_BYTES = 25 * 1024 * 1024  # GitHub caps payloads at 25 MB
log = logging.getLogger(__name__)
router = APIRouter()


async def raw_body(request: Request) -> bytes:
    return await request.body()


def answer(status: int, outcome: str, **extra: Any) -> JSONResponse:
    return JSONResponse({"status": outcome, **extra}, status_code=status)


def wants_worker(event: Event, app_slug: str) -> bool:
    """Cheap filters so the queue only sees deliveries that may matter."""
    if event.kind in (Kind.IGNORED, Kind.INSTALLATION):
        return False
    if event.kind is Kind.COMMENT:
        lowered = event.body.lower()
        return not event.sender_is_bot and (PREFIX in lowered or f"@{app_slug}" in lowered)
    return not (event.kind is Kind.PUSH and event.sender_is_bot)


def signature_ok(secret: str, body: bytes, signature: str) -> bool:
    """HMAC-SHA256 of the raw body; anything else (SHA-1, no prefix, odd bytes) is refused."""
    if not signature.startswith("sha256=") or not signature.isascii():
        return False
    try:
        return bool(verify(secret, body, signature))
    except (TypeError, ValueError):
        return False


@router.post("/webhooks/github", status_code=202)
@counted_delivery  # deliveries by event and outcome, acknowledgement latency (after the answer)
def receive_webhook(
    request: Request,
    body: Annotated[bytes, Depends(raw_body)],
    x_hub_signature_256: Annotated[str | None, Header()] = None,
    x_github_event: Annotated[str | None, Header()] = None,
    x_github_delivery: Annotated[str | None, Header()] = None,
) -> JSONResponse:
    """Acknowledge a GitHub delivery in milliseconds; the work happens on a worker."""
    secret: str = request.app.state.webhook_secret
    if not signature_ok(secret, body, x_hub_signature_256 or ""):
        return answer(401, "invalid signature", hint="check STEPWISE_WEBHOOK_SECRET")
    if not x_github_event or not x_github_delivery:
        return answer(400, "missing X-GitHub-Event or X-GitHub-Delivery header")
    if len(body) > MAX_PAYLOAD_BYTES:
        return answer(413, "payload too large")
    try:
        payload = json.loads(body)
        event = normalise(x_github_event, x_github_delivery[:100], payload)
    except (ValueError, RecursionError, MalformedPayloadError) as exc:
        return answer(400, "malformed payload", problem=str(exc)[:200])
    extra = {"event": x_github_event, "delivery": event.delivery_id}
    if event.kind is Kind.INSTALLATION:
        log.info("installation event", extra={**extra, "action": event.reason})
    if not wants_worker(event, request.app.state.app_slug):
        return answer(202, "ignored", reason=event.reason or event.kind.value)
    connection: redis.Redis = request.app.state.redis
    key = delivery_key(event.delivery_id)
    task_id = rq_id("event", event.delivery_id)
    if not connection.set(key, "1", nx=True, ex=DELIVERY_TTL_S):
        # A redelivery of a delivery whose worker died (or whose task failed) is taken again.
        if task_abandoned(connection, task_id, lease=event_lease(event.delivery_id)):
            requeue(connection, task_id)
            return answer(202, "requeued")
        return answer(202, "duplicate")
    try:  # the dedupe key proves the id is new: one more round trip queues it
        with connection.pipeline(transaction=True) as pipe:
            enqueue_new(pipe, connection, "event", event.model_dump(mode="json"),
                        job_id=task_id)
            pipe.execute()
    except Exception:
        connection.delete(key)  # let GitHub's redelivery try again
        log.exception("could not enqueue a delivery", extra=extra)
        return answer(503, "queue unavailable")
    return answer(202, "queued")
