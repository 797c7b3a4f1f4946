"""`GET /metrics`: the Prometheus exposition of the numbers `bot.observability.metrics` keeps in Redis, with
jobs by status and the queue depth read at scrape time."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import UTC

import redis
from fastapi import APIRouter, Request, Response
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from rq import Queue
from rq.registry import FailedJobRegistry, ScheduledJobRegistry, StartedJobRegistry

from bot.observability import github_metrics
from bot.observability.metrics import SEP, Spec
from bot.observability.metrics import SPECS as metrics_specs
from bot.observability.process_metrics import PROCESS, REDIS_UP
from bot.plumbing.connections import as_text
from bot.plumbing.queue import queue
from bot.plumbing.worker_beats import live_workers
from bot.taskcenter.records import HeadCache, JobHead, all_job_ids
from jobs.kernel.model import JobStatus

SPECS = (*metrics_specs, *github_metrics.SPECS)


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
        yield from gate_families(heads, time.time())
        yield from github_metrics.rate_limit_families(self.connection)
        yield from worker_families(self.connection)
        depth = GaugeMetricFamily("stepwise_queue_depth", "RQ tasks on the `stepwise` queue, by "
                                  "state.", labels=["state"])
        q = queue(self.connection)
        depth.add_metric(["queued"], q.count)
        for state, registry in (("scheduled", ScheduledJobRegistry), ("started", StartedJobRegistry),
                                ("failed", FailedJobRegistry)):
            depth.add_metric([state], registry(queue=q).count)
        yield depth
        oldest = GaugeMetricFamily("stepwise_queue_oldest_age_seconds", "How long the oldest "
                                   "task waiting on the queue has waited (0 when none waits).",
                                   labels=["queue"])
        oldest.add_metric([q.name], oldest_queued_age_s(q, time.time()))
        yield oldest

    def _stored(self) -> dict[str, dict[str, str]]:
        pipe = self.connection.pipeline(transaction=False)
        for spec in SPECS:
            pipe.hgetall(spec.key)
        results = pipe.execute()
        return {spec.name: {as_text(k): as_text(v) for k, v in raw.items()}
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


def gate_families(heads: list[JobHead], now: float) -> Iterator[Metric]:
    """Jobs waiting at a gate and the oldest gate's age, by gate kind (ended jobs have none)."""
    waiting = GaugeMetricFamily("stepwise_jobs_at_gate", "Jobs waiting at a gate, by gate kind.",
                                labels=["gate"])
    age = GaugeMetricFamily("stepwise_gate_oldest_age_seconds", "How long the oldest open gate "
                            "of each kind has waited for a person.", labels=["gate"])
    opened: dict[str, list[float]] = {}
    for head in heads:
        if head.status is JobStatus.AWAITING_HUMAN and head.gate is not None:
            at = head.gate.opened_at.timestamp() if head.gate.opened_at else now
            opened.setdefault(head.gate.kind, []).append(at)
    for kind, times in sorted(opened.items()):
        waiting.add_metric([kind], len(times))
        age.add_metric([kind], max(0.0, now - min(times)))
    yield waiting
    yield age


def worker_families(connection: redis.Redis) -> Iterator[Metric]:
    """Workers whose heartbeat is recent (bot/plumbing/worker_beats.py: a killed worker drops
    out within BEAT_TTL_S), by state: idle, busy, ..."""
    alive = GaugeMetricFamily("stepwise_workers", "Workers alive (a heartbeat within the last "
                              "35 s, BEAT_TTL_S), by state.", labels=["state"])
    states: dict[str, int] = {"idle": 0, "busy": 0}
    for worker in live_workers(connection):
        state = worker.state[:20]
        states[state] = states.get(state, 0) + 1
    for state, count in sorted(states.items()):
        alive.add_metric([state], count)
    yield alive


def oldest_queued_age_s(q: Queue, now: float) -> float:
    """Age of the task at the head of the queue (RQ pops from the left: the oldest)."""
    for task_id in q.get_job_ids(0, 1):
        task = q.fetch_job(task_id)
        if task is not None and task.enqueued_at is not None:
            return max(0.0, now - task.enqueued_at.replace(tzinfo=UTC).timestamp())
    return 0.0


def _bound(value: float) -> str:
    return str(float(value))



router = APIRouter()


@router.get("/metrics", include_in_schema=True, tags=["operations"],
            response_class=Response, responses={200: {"content": {CONTENT_TYPE_LATEST: {}}}})
def metrics(request: Request) -> Response:
    """Prometheus metrics: jobs by status, batch outcomes and durations, validation durations,
    webhook deliveries and acknowledgement latency, queue depth, GitHub API calls, errors and
    rate limits, model tokens. Aggregates only: no job data."""
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
