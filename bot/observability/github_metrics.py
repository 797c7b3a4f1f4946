"""GitHub call and rate-limit metrics, kept in Redis like the others (bot.observability.metrics)
so that the web app's scrape adds up every worker's calls.

Every answer of every githubkit client is counted where the client is made (bot/github/app.py
hands `GitHubCallMetrics` to bot/github/observer.py's hooks): calls by method, route template
and status class, conditional reads answered 304, retries in place, answers refused for a rate
limit; and the latest `x-ratelimit-remaining`/`-limit`/`-reset` per installation and resource,
served as gauges. The waits of jobs for a rate limit are counted by bot/server/rate_limits.py.
Recording never fails the caller.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator

import redis
from prometheus_client.core import GaugeMetricFamily, Metric

from bot.github.observer import Answer, status_class
from bot.observability.metrics import Spec, add, record
from bot.plumbing.keys import metric_key

log = logging.getLogger(__name__)
CALLS = Spec("stepwise_github_calls_total", "GitHub API calls (each try) by method, route "
             "template and status class (2xx, 3xx, 4xx, 5xx).", "counter",
             ("method", "route", "status"))
NOT_MODIFIED = Spec("stepwise_github_conditional_hits_total", "Conditional GitHub reads "
                    "answered 304 Not Modified (not counted against the rate limit), by route.",
                    "counter", ("route",))
RETRIES = Spec("stepwise_github_retries_total", "GitHub calls retried in place after a "
               "transient fault, by method and route template.", "counter", ("method", "route"))
RATE_LIMITED = Spec("stepwise_github_rate_limited_total", "GitHub answers refused for a rate "
                    "limit, by kind (primary or secondary).", "counter", ("kind",),
                    initial=(("primary",), ("secondary",)))
RATE_LIMIT_WAITS = Spec("stepwise_github_rate_limit_waits_total", "Times a job stopped to wait "
                        "for a GitHub rate limit, by kind (primary or secondary).", "counter",
                        ("kind",), initial=(("primary",), ("secondary",)))
SPECS = (CALLS, NOT_MODIFIED, RETRIES, RATE_LIMITED, RATE_LIMIT_WAITS)
RATE_LIMIT_KEY = metric_key("github_rate_limit")  # a hash: [installation, resource] -> latest headers
STALE_AFTER_S = 3600  # an entry whose reset passed this long ago is no longer shown


class GitHubCallMetrics:
    """The observer of GitHub calls (bot/github/observer.py) that counts them in Redis."""

    def __init__(self, connection: redis.Redis) -> None:
        self.connection = connection

    def answered(self, answer: Answer) -> None:
        """Count one answer and keep its rate-limit headers, in one round trip."""
        items = [(CALLS, {"method": answer.method, "route": answer.route,
                          "status": status_class(answer.status)}, 1.0)]
        if answer.status == 304:
            items.append((NOT_MODIFIED, {"route": answer.route}, 1.0))
        if answer.limited is not None:
            items.append((RATE_LIMITED, {"kind": answer.limited}, 1.0))
        limit = answer.rate_limit
        try:
            pipe = self.connection.pipeline(transaction=False)
            for spec, labels, value in items:
                add(pipe, spec, labels, value)
            if limit is not None:
                pipe.hset(RATE_LIMIT_KEY, json.dumps([answer.installation, limit.resource]),
                          json.dumps([limit.remaining, limit.limit, limit.reset]))
            pipe.execute()
        except redis.RedisError as exc:
            log.warning("GitHub call not counted", extra={"error": type(exc).__name__})

    def retried(self, method: str, route: str) -> None:
        record(self.connection, [(RETRIES, {"method": method, "route": route}, 1.0)])


def record_rate_limit_wait(connection: redis.Redis, kind: str) -> None:
    """A job stops to wait for a rate limit (bot/server/rate_limits.py)."""
    record(connection, [(RATE_LIMIT_WAITS, {"kind": kind if kind in ("primary", "secondary")
                                            else "other"}, 1.0)])


def rate_limit_families(connection: redis.Redis, now: float | None = None) -> Iterator[Metric]:
    """The latest rate-limit headers per installation and resource, as three gauges."""
    now = time.time() if now is None else now
    labels = ["installation", "resource"]
    remaining = GaugeMetricFamily("stepwise_github_rate_limit_remaining", "Requests left in the "
                                  "current rate-limit window (latest x-ratelimit-remaining), per "
                                  "installation (app: the App's own calls) and resource.",
                                  labels=labels)
    limit = GaugeMetricFamily("stepwise_github_rate_limit_limit", "Requests allowed per window "
                              "(latest x-ratelimit-limit), per installation and resource.",
                              labels=labels)
    reset = GaugeMetricFamily("stepwise_github_rate_limit_reset_timestamp_seconds", "When the "
                              "window resets (latest x-ratelimit-reset, Unix time), per "
                              "installation and resource.", labels=labels)
    stored: dict[bytes | str, bytes | str] = connection.hgetall(RATE_LIMIT_KEY)
    for field, value in sorted(stored.items()):
        try:
            installation, resource = json.loads(field)
            left, allowed, resets = json.loads(value)
        except (ValueError, TypeError):
            continue
        if float(resets) < now - STALE_AFTER_S:
            continue  # an old window (an installation that went quiet, or went away)
        names = [str(installation), str(resource)]
        remaining.add_metric(names, float(left))
        limit.add_metric(names, float(allowed))
        reset.add_metric(names, float(resets))
    yield from (remaining, limit, reset)
