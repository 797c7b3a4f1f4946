"""`GET /metrics`: the Prometheus exposition of the numbers `bot.observability.metrics` keeps in Redis, with
jobs by status and the queue depth read at scrape time."""

from __future__ import annotations

import json
from collections.abc import Iterator

import redis
from fastapi import APIRouter, Request, Response
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from rq.registry import FailedJobRegistry, ScheduledJobRegistry, StartedJobRegistry

from bot.observability.metrics import KEY, SEP, SPECS, Spec
from bot.observability.process_metrics import PROCESS, REDIS_UP
from bot.server.worker import queue
from bot.taskcenter.records import HeadCache, all_job_ids
from jobs.domain.model import JobStatus


class RedisCollector:
    """Reads the counters and histograms from Redis, jobs by status and the queue at scrape time."""

    def __init__(self, connection: redis.Redis, cache: HeadCache) -> None:
        self.connection = connection
        self.cache = cache

    def collect(self) -> Iterator[Metric]:
        stored = self._stored()
        for spec in SPECS:
            yield self._family(spec, stored.get(spec.name, {}))
        jobs = GaugeMetricFamily("stepwise_jobs", "Jobs by status, from the job records.",
                                 labels=["status"])
        heads = self.cache.heads(self.connection, all_job_ids(self.connection))
        for status in JobStatus:
            jobs.add_metric([status.value], sum(1 for h in heads if h.status is status))
        yield jobs
        depth = GaugeMetricFamily("stepwise_queue_depth", "RQ tasks on the `stepwise` queue, by "
                                  "state.", labels=["state"])
        q = queue(self.connection)
        depth.add_metric(["queued"], q.count)
        for state, registry in (("scheduled", ScheduledJobRegistry), ("started", StartedJobRegistry),
                                ("failed", FailedJobRegistry)):
            depth.add_metric([state], registry(queue=q).count)
        yield depth

    def _stored(self) -> dict[str, dict[str, str]]:
        pipe = self.connection.pipeline(transaction=False)
        for spec in SPECS:
            pipe.hgetall(KEY + spec.name)
        results = pipe.execute()
        return {spec.name: {_text(k): _text(v) for k, v in raw.items()}
                for spec, raw in zip(SPECS, results, strict=True)}

    @staticmethod
    def _family(spec: Spec, fields: dict[str, str]) -> Metric:
        series: dict[str, dict[str, float]] = {json.dumps(list(v)): {} for v in spec.initial}
        for field, value in fields.items():
            labels, _, part = field.partition(SEP)
            series.setdefault(labels, {})[part] = float(value)
        if spec.kind == "counter":
            counter = CounterMetricFamily(spec.name, spec.help, labels=list(spec.labels))
            for labels, parts in sorted(series.items()):
                counter.add_metric(json.loads(labels), parts.get("v", 0.0))
            return counter
        histogram = HistogramMetricFamily(spec.name, spec.help, labels=list(spec.labels))
        for labels, parts in sorted(series.items()):
            count = parts.get("count", 0.0)
            per_bucket = [parts.get(f"b{i}", 0.0) for i in range(len(spec.buckets))]
            buckets = [(_bound(b), sum(per_bucket[: i + 1])) for i, b in enumerate(spec.buckets)]
            histogram.add_metric(json.loads(labels), [*buckets, ("+Inf", count)],
                                 parts.get("sum", 0.0))
        return histogram


def _bound(value: float) -> str:
    return str(float(value))


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


router = APIRouter()


@router.get("/metrics", include_in_schema=True, tags=["operations"],
            response_class=Response, responses={200: {"content": {CONTENT_TYPE_LATEST: {}}}})
def metrics(request: Request) -> Response:
    """Prometheus metrics: jobs by status, batch outcomes and durations, validation durations,
    webhook deliveries and acknowledgement latency, queue depth, GitHub API errors, model
    tokens. Aggregates only: no job data."""
    connection: redis.Redis = request.app.state.redis
    cache = getattr(request.app.state, "head_cache", None) or HeadCache()
    registry = CollectorRegistry(auto_describe=False)
    registry.register(RedisCollector(connection, cache))
    try:
        body = generate_latest(registry)
        REDIS_UP.set(1)
    except redis.RedisError as exc:  # still 200: the process's own metrics say Redis is down
        body = f"# Redis unavailable: {type(exc).__name__}\n".encode()
        REDIS_UP.set(0)
    return Response(body + generate_latest(PROCESS), media_type=CONTENT_TYPE_LATEST)
