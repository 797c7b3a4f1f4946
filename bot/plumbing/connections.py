"""Redis clients per role, with explicit timeouts (never the client library's defaults).

- The web app (`web_redis`) gives up on a call within its request deadline
  (STEPWISE_WEB_REDIS_DEADLINE_S, 2 s) and never retries one (bot/web/redis_deadline.py).
- A worker's own calls (`worker_redis`: the store, leases, the reaper) give up on one call after
  STEPWISE_REDIS_SOCKET_TIMEOUT_S: a hung Redis fails a call, it does not stall a lease renewal.
- RQ's blocking wait for work (`dequeue_redis`) lasts up to STEPWISE_DEQUEUE_TIMEOUT_S, so its
  socket timeout is longer than that wait. redis-py 8 defaults every socket to a 5 s timeout;
  with it, each idle wait would end in a TimeoutError that RQ logs as "could not connect to
  Redis" and answers with a back-off of up to a minute, leaving queued steps waiting.

All of them send TCP keep-alives and check an idle pooled connection before reusing it, so a
connection cut while Redis restarted is replaced instead of failing the next call.

What the clients hand back is read here too: a string from bytes or str (`as_text`, a client with
or without `decode_responses`), and a stored JSON document that may be missing or damaged
(`as_document`).
"""

from __future__ import annotations

import json
import logging
from typing import Any

from redis import Redis
from redis.backoff import ExponentialBackoff
from redis.exceptions import ResponseError
from redis.retry import Retry

from bot.settings import Settings

HEALTH_CHECK_INTERVAL_S = 15  # an idle pooled connection is PINGed before reuse after this long
DEQUEUE_MARGIN_S = 30  # the blocking wait's socket outlives the wait by this much
log = logging.getLogger(__name__)


def _options(settings: Settings, *, socket_timeout: float, retries: int) -> dict[str, Any]:
    # A call that fails on a connection error is tried `retries` more times, quickly: redis-py
    # 8's default (3 more, with back-off) makes one call on a dead Redis take seconds.
    options: dict[str, Any] = {
        "socket_timeout": socket_timeout, "socket_connect_timeout": settings.redis_connect_timeout_s,
        "health_check_interval": HEALTH_CHECK_INTERVAL_S,
        "retry": Retry(ExponentialBackoff(cap=0.5, base=0.05), retries)}
    if not settings.redis_url.startswith("unix://"):  # a unix socket has no TCP keepalive
        options["socket_keepalive"] = True
    return options


def web_redis(settings: Settings) -> Redis:
    """The web app's client: a call (connecting included) fails within the request's deadline
    (STEPWISE_WEB_REDIS_DEADLINE_S) and is never retried: the deadline is for the whole
    request, and a retry on a hung Redis only holds a thread longer (bot/web/redis_deadline.py)."""
    deadline = settings.web_redis_deadline_s
    options = _options(settings, socket_timeout=min(deadline, settings.redis_socket_timeout_s),
                       retries=0)
    options["socket_connect_timeout"] = min(deadline, settings.redis_connect_timeout_s)
    return Redis.from_url(settings.redis_url, **options)


def worker_redis(settings: Settings) -> Redis:
    """A worker's client for its own calls (store, leases, reaper, reconciler)."""
    return Redis.from_url(settings.redis_url, **_options(
        settings, socket_timeout=settings.redis_socket_timeout_s, retries=3))


def dequeue_socket_timeout_s(settings: Settings) -> float:
    return float(settings.dequeue_timeout_s + DEQUEUE_MARGIN_S)


def dequeue_redis(settings: Settings) -> Redis:
    """The RQ worker's own client: its blocking wait (up to STEPWISE_DEQUEUE_TIMEOUT_S) never
    outlasts the socket's timeout."""
    return Redis.from_url(settings.redis_url, **_options(
        settings, socket_timeout=dequeue_socket_timeout_s(settings), retries=3))


def warn_unless_noeviction(client: Redis) -> str | None:
    """Log a warning when Redis may evict keys under memory pressure (any `maxmemory-policy`
    but `noeviction`): an evicted job record or lease is lost work. Returns the policy seen
    (None when Redis refuses CONFIG GET, as managed services may)."""
    try:
        answer: dict[Any, Any] = client.config_get("maxmemory-policy")
    except ResponseError:  # CONFIG is disabled or renamed
        return None
    raw = answer.get("maxmemory-policy") or answer.get(b"maxmemory-policy") or ""
    policy = raw.decode() if isinstance(raw, bytes) else str(raw)
    if policy and policy != "noeviction":
        log.warning("Redis maxmemory-policy is %s: under memory pressure Redis may evict job "
                    "records and leases; set `maxmemory-policy noeviction` (docs/operating.md)",
                    policy, extra={"maxmemory_policy": policy})
    return policy


def as_text(value: bytes | str | None) -> str:
    """`value` as a string ("" for a missing key)."""
    return value.decode() if isinstance(value, bytes) else (value or "")


def as_document(raw: bytes | str | None) -> dict[str, Any] | None:
    """A stored JSON object, or None when the key is missing or holds anything else."""
    try:
        doc = json.loads(raw) if raw else None
    except ValueError:
        return None
    return doc if isinstance(doc, dict) else None
