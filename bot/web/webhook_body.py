"""The web edge: a webhook body is refused by its declared length, read as a capped stream
within a budget shared by every request of the process (so concurrent large bodies with any
`sha256=` signature cannot exhaust memory: past it the answer is 503 with Retry-After), and
decoded from either content type GitHub sends (JSON, or a form with a `payload` field)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs

from fastapi import Request
from starlette.requests import ClientDisconnect

MAX_PAYLOAD_BYTES = 25 * 1024 * 1024  # GitHub caps payloads at 25 MB
FORM_CONTENT_TYPE = "application/x-www-form-urlencoded"
TOO_LARGE = "payload too large"
MAX_BUFFERED_BYTES = 64 * 1024 * 1024  # all bodies held at once, across concurrent requests
BUSY = "too many large deliveries at once; retry later"


class BodyBudget:
    """Bytes of webhook bodies held at once by this process (the event loop is its only user,
    so no lock is needed)."""

    def __init__(self, limit: int = MAX_BUFFERED_BYTES) -> None:
        self.limit = limit
        self.held = 0

    def take(self, size: int) -> bool:
        if self.held + size > self.limit:
            return False
        self.held += size
        return True

    def give(self, size: int) -> None:
        self.held = max(0, self.held - size)


@dataclass(frozen=True)
class ReceivedBody:
    """The raw bytes as received (what the signature covers), or why they were refused."""

    data: bytes = b""
    problem: str = ""  # "" when `data` is the whole body
    status: int = 200
    held: int = 0  # bytes taken from the budget, given back once the request is answered


def has_sha256_signature(request: Request) -> bool:
    """A signature worth checking is present (so an unsigned request costs no read at all)."""
    value = request.headers.get("x-hub-signature-256", "")
    return value.startswith("sha256=") and value.isascii()


async def read_capped(request: Request, *, limit: int = MAX_PAYLOAD_BYTES,
                      budget: BodyBudget | None = None) -> ReceivedBody:
    """Read the body without ever holding more than `limit` bytes of it, nor more than the
    shared `budget` has left (503: retry later).

    A declared Content-Length over the limit is refused before any byte is read; a chunked
    body (no declared length) is read chunk by chunk and refused as soon as it passes the limit.
    """
    budget = budget if budget is not None else BodyBudget(limit)
    declared = request.headers.get("content-length")
    if declared is not None:
        if not declared.isdigit():
            return ReceivedBody(problem="malformed Content-Length header", status=400)
        if int(declared) > limit:
            return ReceivedBody(problem=TOO_LARGE, status=413)
    if not has_sha256_signature(request):
        return ReceivedBody(problem="invalid signature", status=401)
    # Each byte is held twice at the end (the chunks and the joined body): both count.
    reserved = 2 * int(declared) if declared is not None else 0
    if not budget.take(reserved):
        return ReceivedBody(problem=BUSY, status=503)
    chunks: list[bytes] = []
    size = 0
    try:
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                chunks.clear()
                budget.give(reserved)
                return ReceivedBody(problem=TOO_LARGE, status=413)
            if 2 * size > reserved:  # more than declared (or nothing declared): as it comes
                if not budget.take(2 * size - reserved):
                    chunks.clear()
                    budget.give(reserved)
                    return ReceivedBody(problem=BUSY, status=503)
                reserved = 2 * size
            chunks.append(chunk)
    except ClientDisconnect:
        budget.give(reserved)
        return ReceivedBody(problem="the client went away before the body ended", status=400)
    return ReceivedBody(data=b"".join(chunks), held=reserved)


def decode_payload(body: bytes, content_type: str | None) -> Any:
    """The JSON document of a delivery; form deliveries carry it in the `payload` field.

    Raises ValueError naming the problem when the body is neither.
    """
    media_type = (content_type or "application/json").split(";", 1)[0].strip().lower()
    if media_type == FORM_CONTENT_TYPE:
        try:
            fields = parse_qs(body.decode("ascii"), strict_parsing=True, max_num_fields=16)
        except (UnicodeDecodeError, ValueError) as exc:
            raise ValueError(f"the form body does not parse: {exc}") from None
        values = fields.get("payload")
        if not values or len(values) != 1:
            raise ValueError("a form delivery needs exactly one `payload` field")
        return json.loads(values[0])
    return json.loads(body)
