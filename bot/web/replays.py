"""A delivery's body seen before under another delivery id is a replay: refused.

GitHub signs the body only and the delivery id is a header the sender chooses, so a captured
signed body can be sent again with a fresh id. GitHub's own redelivery keeps the id (the
delivery dedupe in webhooks.py answers it); every genuine new delivery has a body of its own
(ids, timestamps). The body's SHA-256 is kept for thirty days (ten times the three days GitHub
lets a delivery be redelivered); a body older than that which ends or parks jobs is confirmed
with GitHub by the worker before anything happens (bot/server/confirmations.py).
"""

from __future__ import annotations

import hashlib

import redis

from bot.plumbing.keys import delivery_body_key

BODY_TTL_S = 30 * 24 * 3600


def body_digest(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()


def first_time(connection: redis.Redis, digest: str) -> bool:
    """Record the body; False when it was taken before (a replay)."""
    return bool(connection.set(delivery_body_key(digest), "1", nx=True, ex=BODY_TTL_S))


def forget(connection: redis.Redis, digest: str) -> None:
    """The delivery could not be queued: GitHub's redelivery of it must be taken."""
    connection.delete(delivery_body_key(digest))
