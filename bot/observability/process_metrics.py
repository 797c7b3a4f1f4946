"""Metrics kept in the web process itself, for what cannot be counted in Redis because Redis is
the thing that failed: deliveries answered 503 `queue_unavailable`, and whether the last scrape
reached Redis. `GET /metrics` serves them with the Redis-kept ones (and alone when Redis is
down, with 200, so the scrape itself does not fail and the alert can fire). Per process: with
`stepwise serve --workers N`, each process counts its own."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge

PROCESS = CollectorRegistry(auto_describe=True)
QUEUE_UNAVAILABLE = Counter(
    "stepwise_webhook_queue_unavailable", "Webhook deliveries this web process answered 503 "
    "queue_unavailable (Redis unavailable), since it started.", registry=PROCESS)
REDIS_UP = Gauge("stepwise_redis_up", "1 when this scrape read Redis, 0 when Redis did not answer.",
                 registry=PROCESS)
