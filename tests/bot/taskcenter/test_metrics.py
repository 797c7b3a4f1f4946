"""/metrics: counted from the job record and the webhook path, kept in Redis, scraped over HTTP
after an end-to-end job (signed webhooks, a real worker, the fake GitHub)."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import httpx
import redis
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families
from redis.backoff import NoBackoff
from redis.retry import Retry

from bot.github.errors import ForgeError
from bot.observability import metrics
from bot.taskcenter.records import HeadCache
from bot.web.metrics_route import RedisCollector
from jobs.basics.errors import RetryClass
from jobs.features.llm.usage import usage
from jobs.kernel.job import Job
from jobs.kernel.model import BatchStatus, JobStatus
from tests.bot.conftest import open_world
from tests.bot.taskcenter.conftest import START, TOKEN, attempt, build

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def parse(text: str) -> Samples:
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def scrape(url: str, until: Callable[[Samples], bool] = lambda _: True) -> Samples:
    """Counts from the webhook path are written just after the answer: wait a moment for them."""
    deadline = time.monotonic() + 5
    while True:
        response = httpx.get(f"{url}/metrics", trust_env=False)
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/plain")
        samples = parse(response.text)
        if until(samples) or time.monotonic() > deadline:
            return samples
        time.sleep(0.05)


def test_metrics_after_an_end_to_end_job(tmp_path: Path, redis_url: str) -> None:
    with open_world(tmp_path, redis_url, dashboard_token=TOKEN) as world:
        assert world.send("issues.labeled", issue_number=1, sender="maria").status_code == 202
        world.work()
        world.comment("/stepwise approve", by="maria")  # plan: batch 1, milestone 1 gate
        world.work()
        opened = world.job().server.pull
        assert opened is not None
        pull = opened.number
        # batch 2 fails and is split: its broken file set aside as batch 4, at the end
        world.comment("/stepwise approve", by="maria", on=pull)
        world.work()
        world.comment("/stepwise approve", by="maria", on=pull)  # batch 3, then batch 4 fails
        world.work()
        assert world.job().gate.kind == "failure" and world.job().gate.batch == 4
        world.comment("/stepwise skip needs a manual import fix", by="maria", on=pull)
        world.work()  # the final review
        job = world.job()
        assert job.status is JobStatus.COMPLETED
        # A forged delivery and a redelivery are counted too, by outcome.
        # (an edit of the job's issue: a label that is not the trigger is not even queued)
        edit = {"issue_number": 1, "sender": "maria", "changes": {"body": {"from": "old"}}}
        assert world.send("issues.edited", delivery_id="same-1", **edit).status_code == 202
        assert world.send("issues.edited", delivery_id="same-1",
                          **edit).json()["status"] == "duplicate"
        assert world.post("issues", b"{}", unsigned=True).status_code == 401
        world.work()

        samples = scrape(world.url, lambda s: value(
            s, "stepwise_webhook_deliveries_total", event="unverified",
            outcome="invalid_signature") == 1)
        batches = "stepwise_batches_total"
        # completed: batches 1, 3 and 2 (its good file, after the split); failed: batch 2's
        # attempt with both files and batch 4's alone; skipped: batch 4
        assert value(samples, batches, outcome="completed") == 3
        assert value(samples, batches, outcome="failed") == 2
        assert value(samples, batches, outcome="skipped") == 1
        assert value(samples, batches, outcome="reverted") == 0
        durations = "stepwise_batch_duration_seconds_count"
        assert value(samples, durations, outcome="committed") == 3
        assert value(samples, durations, outcome="failed") == 2
        checks = "stepwise_validation_duration_seconds_count"
        # batches 1, 2 (whole), 3 and 4, and the subset of batch 2 committed (its evidence);
        # the split's failing subset is no attempt's, so it is not counted here
        assert value(samples, checks, phase="batch") == 5
        assert value(samples, checks, phase="baseline") == 1
        # The head's tree is the last one validated and the base did not move: the final review
        # does not run the tests a second time (issue 27).
        assert value(samples, checks, phase="final_review") == 0
        assert value(samples, "stepwise_validation_duration_seconds_sum", phase="batch") > 0
        deliveries = "stepwise_webhook_deliveries_total"
        assert value(samples, deliveries, event="issues", outcome="queued") == 2
        assert value(samples, deliveries, event="issue_comment", outcome="queued") == 4
        assert value(samples, deliveries, event="issues", outcome="duplicate") == 1
        assert value(samples, "stepwise_webhook_ack_seconds_count", outcome="queued") == 6
        assert value(samples, "stepwise_webhook_ack_seconds_bucket", outcome="queued",
                     le="+Inf") == 6
        assert value(samples, "stepwise_jobs", status="completed") == 1
        assert value(samples, "stepwise_jobs", status="running") == 0
        assert value(samples, "stepwise_queue_depth", state="queued") == 0
        assert value(samples, "stepwise_model_tokens_total", direction="in") == 0
        assert not [k for k in samples if k[0] == "stepwise_github_api_errors_total"]

        # The same job in the task center, over HTTP with the token.
        page = httpx.get(f"{world.url}/jobs/{job.id}", trust_env=False,
                         headers={"Authorization": f"Bearer {TOKEN}"})
        assert page.status_code == 200 and 'id="batch-3"' in page.text
        assert "needs a manual import fix" in page.text


def test_observing_counts_each_change_once(connection: redis.Redis) -> None:
    connection.flushdb()
    job = build("running", 0)  # batch 1 completed, 2 in progress, 3 pending
    metrics.observe(connection, job)
    metrics.observe(connection, job)  # nothing new
    batch = job.batch(2)
    batch.attempts[0].finished_at = batch.attempts[0].started_at + timedelta(seconds=30)
    batch.attempts[0].outcome = "failed"
    batch.status = BatchStatus.FAILED
    metrics.observe(connection, job)
    batch.attempts.append(attempt(2, "validated", START, seconds=12))
    batch.status, batch.commit = BatchStatus.COMPLETED, "9" * 40
    job.batch(3).status = BatchStatus.SKIPPED
    job.batch(1).status = BatchStatus.REVERTED
    metrics.observe(connection, job)
    metrics.observe(connection, job)
    counted = {labels[0][1]: amount for (name, labels), amount in stored(connection).items()
               if name == "stepwise_batches_total"}
    assert counted == {"completed": 2, "failed": 1, "skipped": 1, "reverted": 1}
    tally = stored(connection)
    assert tally[("stepwise_batch_duration_seconds_count", (("outcome", "validated"),))] == 2
    assert tally[("stepwise_batch_duration_seconds_count", (("outcome", "failed"),))] == 1


def test_a_batch_failed_by_a_setback_counts_once_and_errors_by_kind(
        connection: redis.Redis) -> None:
    connection.flushdb()
    job = build("running", 0)
    metrics.observe(connection, job)
    job.batch(2).status = BatchStatus.FAILED  # transient retries ran out: no failed attempt
    metrics.observe(connection, job)
    metrics.record_github_error(connection, ForgeError("GitHub answered 502", code="github_transient",
                                                       retry_class=RetryClass.AUTO_RETRY))
    metrics.record_github_error(connection, ValueError("not a GitHub error"))
    metrics.record_tokens(connection, tokens_in=120, tokens_out=30)
    tally = stored(connection)
    assert tally[("stepwise_batches_total", (("outcome", "failed"),))] == 1
    assert tally[("stepwise_github_api_errors_total", (("kind", "github_transient"),))] == 1
    assert len([k for k in tally if k[0] == "stepwise_github_api_errors_total"]) == 1
    assert tally[("stepwise_model_tokens_total", (("direction", "in"),))] == 120


def test_a_records_model_tokens_are_counted_from_the_record(connection: redis.Redis) -> None:
    connection.flushdb()
    job = build("running", 0)
    metrics.observe(connection, job)
    usage(job).tokens_in, usage(job).tokens_out = 1000, 250
    metrics.observe(connection, job)
    usage(job).tokens_in = 1500
    metrics.observe(connection, job)
    tally = stored(connection)
    assert tally[("stepwise_model_tokens_total", (("direction", "in"),))] == 1500
    assert tally[("stepwise_model_tokens_total", (("direction", "out"),))] == 250


def test_recording_never_fails_the_caller() -> None:
    dead = redis.Redis(host="127.0.0.1", port=1, socket_connect_timeout=0.2,
                       retry=Retry(NoBackoff(), 0))
    metrics.observe(dead, build("running", 0))
    metrics.record_tokens(dead, tokens_in=5)


def stored(connection: redis.Redis) -> Samples:
    """The stored series, as a scrape shows them (without the gauges)."""
    collector = RedisCollector(connection, HeadCache())
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in collector.collect() for s in family.samples
            if not s.name.startswith(("stepwise_jobs", "stepwise_queue"))}


def test_gates_workers_and_the_oldest_queued_task_are_measured_at_scrape_time(
        client: TestClient, connection: redis.Redis, seeded: dict[str, Job]) -> None:
    from rq.worker import SimpleWorker

    from bot.plumbing.queue import enqueue, queue
    from bot.plumbing.worker_beats import beat, forget

    waiting = [j for j in seeded.values() if j.status is JobStatus.AWAITING_HUMAN and j.gate]
    assert waiting
    task = enqueue(connection, "reconcile", {}, retry=False)
    assert task is not None
    worker = SimpleWorker([queue(connection)], connection=connection)
    worker.register_birth()
    # A worker is counted by its heartbeat (bot/server/heartbeat.py), as `stepwise worker` beats.
    beat(connection, worker.name, state="idle", host="here")
    try:
        time.sleep(1.1)
        samples = parse(client.get("/metrics").text)
    finally:
        forget(connection, worker.name)
        worker.register_death()
    kinds = {str(j.gate.kind) for j in waiting if j.gate is not None}
    for kind in kinds:
        assert value(samples, "stepwise_jobs_at_gate", gate=kind) >= 1
        assert value(samples, "stepwise_gate_oldest_age_seconds", gate=kind) > 0
    assert sum(v for (name, _), v in samples.items() if name == "stepwise_jobs_at_gate") == \
        len(waiting)  # ended jobs are at no gate
    assert value(samples, "stepwise_queue_oldest_age_seconds", queue="stepwise") >= 1.0
    assert sum(v for (name, _), v in samples.items() if name == "stepwise_workers") == 1
    assert value(samples, "stepwise_redis_up") == 1
