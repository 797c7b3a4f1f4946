"""A suspended installation's mark in Redis (`installation:<id>:suspended`, holding who and
since when), set once GitHub confirms an `installation.suspend` delivery (by the worker,
bot/server/confirmations.py: a replayed body must not park anything) or a call answers
"suspended", and cleared by a confirmed `installation.unsuspend`.
What a worker does about it (parking and resuming jobs) is bot/server/suspensions.py."""

from __future__ import annotations

from datetime import datetime

import redis

from bot.events import Event
from bot.plumbing.keys import suspended_key

SUSPEND, UNSUSPEND = "installation.suspend", "installation.unsuspend"


def is_suspended(connection: redis.Redis, installation_id: int | None) -> bool:
    return bool(installation_id) and bool(connection.exists(suspended_key(int(installation_id or 0))))


def mark(connection: redis.Redis, event: Event, *, at: datetime) -> None:
    """Record a suspend or unsuspend GitHub confirmed."""
    if event.reason == SUSPEND:
        connection.set(suspended_key(event.installation_id), f"{event.account}|{at.isoformat()}")
    elif event.reason == UNSUSPEND:
        connection.delete(suspended_key(event.installation_id))


def mark_met(connection: redis.Redis, installation_id: int, *, at: datetime) -> None:
    """Record a suspension a call answered although no webhook said so (no account known)."""
    connection.set(suspended_key(installation_id), f"|{at.isoformat()}")


def suspended_by(connection: redis.Redis, installation_id: int) -> tuple[str, str]:
    """(the account, the ISO time since when) of a suspension mark; empty strings if unknown."""
    raw = connection.get(suspended_key(installation_id))
    text = raw.decode() if isinstance(raw, bytes) else str(raw or "")
    account, _, since = text.partition("|")
    return account, since
