"""Operator metrics (served at `GET /metrics` by bot.web.metrics_route): what is counted and how.

Counters and histograms live in Redis, not in process memory: webhooks are counted by the web
app, batches by the workers (RQ runs each task in a fresh work horse), and one scrape of the web
app must see them all. Jobs by status and queue depth are read at scrape time. Batch numbers are
taken from the job record (`observe` compares the saved record with what it saw last), so they
are what the record says happened, never an estimate. Recording never fails the caller.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import redis
from pydantic import BaseModel
from starlette.background import BackgroundTask

from bot import log_context
from bot.github.errors import ForgeError
from bot.observability.process_metrics import QUEUE_UNAVAILABLE
from bot.plumbing.keys import metric_key, seen_key
from jobs.kernel.feature_parts import (
    MODEL_TOKENS_IN,
    MODEL_TOKENS_OUT,
    OUTSIDE_VERDICTS,
    OUTSIDE_WAITS,
    figures,
    former_figures,
)
from jobs.kernel.job import Job
from jobs.kernel.model import FINISHED_BATCH_STATUSES, BatchStatus
from jobs.kernel.records import CommandEvidence

SEP = "\x1f"  # between the JSON of the label values and the field's part (never inside JSON)
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Spec:
    name: str
    help: str
    kind: Literal["counter", "histogram"]
    labels: tuple[str, ...] = ()
    buckets: tuple[float, ...] = ()
    initial: tuple[tuple[str, ...], ...] = ()  # series shown at 0 before anything happened
    key: str = field(init=False)  # its Redis hash, named once

    def __post_init__(self) -> None:
        object.__setattr__(self, "key", metric_key(self.name))


BATCHES = Spec("stepwise_batches_total", "Batch outcomes from the job record: completed, "
               "failed (each failed attempt), skipped, reverted.", "counter", ("outcome",),
               initial=(("completed",), ("failed",), ("skipped",), ("reverted",)))
BATCH_SECONDS = Spec("stepwise_batch_duration_seconds", "Duration of each batch attempt (edit, "
                     "guard, validation, commit) by its outcome.", "histogram", ("outcome",),
                     (1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600))
VALIDATION_SECONDS = Spec("stepwise_validation_duration_seconds", "Time the validation commands "
                          "took per run: phase batch, baseline or final_review.", "histogram",
                          ("phase",), (0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800))
DELIVERIES = Spec("stepwise_webhook_deliveries_total", "Webhook deliveries by event and outcome.",
                  "counter", ("event", "outcome"))
ACK_SECONDS = Spec("stepwise_webhook_ack_seconds", "Time the web app took to acknowledge a "
                   "delivery, by outcome.", "histogram", ("outcome",),
                   (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5))
GITHUB_ERRORS = Spec("stepwise_github_api_errors_total", "GitHub API errors that stopped a step, "
                     "by kind (the error code).", "counter", ("kind",))
MODEL_TOKENS = Spec("stepwise_model_tokens_total", "Language-model tokens used, by direction "
                    "(in: prompt, out: completion).", "counter", ("direction",),
                    initial=(("in",), ("out",)))
CI_WAITS = Spec("stepwise_ci_waits_total", "Waits for the repository's CI, by scope (milestone "
                "or batch), from the job record.", "counter", ("scope",),
                initial=(("milestone",), ("batch",)))
CI_OUTCOMES = Spec("stepwise_ci_outcomes_total", "What the repository's CI said, by scope and "
                   "outcome: passed, failed, timed_out, and accepted (a failure approved at "
                   "ci_failed).", "counter", ("scope", "outcome"))
SPECS = (BATCHES, BATCH_SECONDS, VALIDATION_SECONDS, DELIVERIES, ACK_SECONDS, GITHUB_ERRORS,
         MODEL_TOKENS, CI_WAITS, CI_OUTCOMES)

# Bounded label values: anything else is counted as "other".
GITHUB_EVENTS = frozenset({"issues", "issue_comment", "pull_request", "push", "installation",
                           "installation_repositories", "ping", "pull_request_review",
                           "pull_request_review_comment", "check_run", "check_suite", "status",
                           "create", "delete", "label", "repository", "star", "watch"})
OUTCOMES = {"queued": "queued", "duplicate": "duplicate", "ignored": "ignored",
            "invalid signature": "invalid_signature", "payload too large": "too_large",
            "malformed payload": "malformed", "queue unavailable": "queue_unavailable"}


# -- recording ------------------------------------------------------------------------------------
def _field(spec: Spec, labels: dict[str, str], part: str) -> str:
    return json.dumps([str(labels.get(name, "")) for name in spec.labels]) + SEP + part


def add(pipe: Any, spec: Spec, labels: dict[str, str], value: float) -> None:
    key = spec.key
    if spec.kind == "counter":
        pipe.hincrbyfloat(key, _field(spec, labels, "v"), value)
        return
    # One bucket per observation (the first that holds it); the scrape adds them up, so an
    # observation costs three commands however many buckets there are.
    index = next((i for i, bound in enumerate(spec.buckets) if value <= bound), None)
    if index is not None:
        pipe.hincrby(key, _field(spec, labels, f"b{index}"), 1)
    pipe.hincrby(key, _field(spec, labels, "count"), 1)
    pipe.hincrbyfloat(key, _field(spec, labels, "sum"), value)


def record(connection: redis.Redis, items: list[tuple[Spec, dict[str, str], float]]) -> None:
    """Add to counters (the value) and histograms (one observation each) in one round trip."""
    if not items:
        return
    try:
        pipe = connection.pipeline(transaction=False)
        for spec, labels, value in items:
            add(pipe, spec, labels, value)
        pipe.execute()
    except redis.RedisError as exc:
        log.warning("metrics not recorded", extra={"error": type(exc).__name__})


def record_tokens(connection: redis.Redis, *, tokens_in: int = 0, tokens_out: int = 0) -> None:
    """Count language-model tokens used outside a job record (a job's own `llm` usage is
    counted from the record by `observe`)."""
    record(connection, [(MODEL_TOKENS, {"direction": d}, float(n))
                        for d, n in (("in", tokens_in), ("out", tokens_out)) if n > 0])


def record_github_error(connection: redis.Redis, exc: Exception) -> None:
    """Count a failed GitHub call by its error code (`github_transient`, `github_403`, ...)."""
    if isinstance(exc, ForgeError):
        record(connection, [(GITHUB_ERRORS, {"kind": exc.code[:60]}, 1.0)])


# -- from the job record --------------------------------------------------------------------------
SEEN_TTL_S = 90 * 24 * 3600


class Seen(BaseModel):
    """What the metrics last saw of a job's record: batch statuses, finished attempts per
    batch, the baseline and final review runs, the model tokens."""

    statuses: dict[int, BatchStatus] = {}
    finished: dict[int, int] = {}
    baseline: str = ""
    review: str = ""
    tokens: tuple[int, int] = (0, 0)
    # the waits for CI and its verdicts seen so far (the figures CI gives, by name)
    verdicts: dict[str, float] = {}


def _tokens(job: Job) -> tuple[int, int]:
    given = figures(job)  # the model usage the features give (llm), none without a model
    return (int(given.get(MODEL_TOKENS_IN, 0)), int(given.get(MODEL_TOKENS_OUT, 0)))


def _runs(commands: list[CommandEvidence]) -> str:
    return json.dumps([[c.argv, c.exit_code, c.duration_s] for c in commands])


def seen_of(job: Job) -> Seen:
    return Seen(
        statuses={b.number: b.status for b in job.batches},
        finished={b.number: sum(1 for a in b.attempts if a.finished_at is not None)
                  for b in job.batches},
        baseline=_runs(job.baseline) if job.baseline else "",
        review=_runs(job.final_review.commands) if job.final_review else "",
        tokens=_tokens(job),
        verdicts=_verdicts(job),
    )


def seen_before(raw: bytes | str | None, job: Job) -> Seen:
    """What was seen of `job` before (nothing on its first observation). A note the previous
    release wrote has no `verdicts`: it kept what it had counted of the waits and verdicts in
    fields of its own, which the features read (`former_figures`), so what was counted before
    an upgrade is not counted again after it."""
    if not raw:
        return Seen()
    note = json.loads(raw)
    seen = Seen.model_validate(note)
    if "verdicts" not in note:
        seen.verdicts = _outside(former_figures(job, note))
    return seen


def _verdicts(job: Job) -> dict[str, float]:
    return _outside(figures(job))


def _outside(given: dict[str, float]) -> dict[str, float]:
    return {name: value for name, value in given.items()
            if name.startswith((f"{OUTSIDE_WAITS}:", f"{OUTSIDE_VERDICTS}:"))}


def ci_observations(before: Seen, job: Job) -> list[tuple[Spec, dict[str, str], float]]:
    """CI waits begun and CI verdicts recorded since `before`, from the totals the CI feature
    gives (`OUTSIDE_WAITS:<scope>`, `OUTSIDE_VERDICTS:<scope>:<outcome>`); none without it."""
    items: list[tuple[Spec, dict[str, str], float]] = []
    for name, total in sorted(_verdicts(job).items()):
        new = total - before.verdicts.get(name, 0.0)
        if new <= 0:
            continue
        kind, scope, *outcome = name.split(":")
        if kind == OUTSIDE_WAITS:
            items.append((CI_WAITS, {"scope": scope}, new))
        else:
            items.append((CI_OUTCOMES, {"scope": scope, "outcome": ":".join(outcome)}, new))
    return items


def observations(before: Seen, job: Job) -> list[tuple[Spec, dict[str, str], float]]:
    """What the record shows happened since `before`, as metric observations."""
    items: list[tuple[Spec, dict[str, str], float]] = []
    validate = job.config.validate_argvs()
    for batch in job.batches:
        finished = [a for a in batch.attempts if a.finished_at is not None]
        new = finished[before.finished.get(batch.number, 0):]
        for attempt in new:
            assert attempt.finished_at is not None
            seconds = max((attempt.finished_at - attempt.started_at).total_seconds(), 0.0)
            items.append((BATCH_SECONDS, {"outcome": attempt.outcome[:40]}, seconds))
            checks = [c.duration_s for c in attempt.commands if c.argv in validate]
            if checks:
                items.append((VALIDATION_SECONDS, {"phase": "batch"}, float(sum(checks))))
        previous = before.statuses.get(batch.number)
        failed = sum(1 for a in new if a.outcome == "failed")
        if batch.status is BatchStatus.FAILED and previous is not BatchStatus.FAILED:
            failed = max(failed, 1)  # failed without a failed attempt (e.g. retries ran out)
        if failed:
            items.append((BATCHES, {"outcome": "failed"}, float(failed)))
        if batch.status in FINISHED_BATCH_STATUSES and previous is not batch.status:
            items.append((BATCHES, {"outcome": batch.status.value}, 1.0))
    if job.baseline and _runs(job.baseline) != before.baseline:
        items.append((VALIDATION_SECONDS, {"phase": "baseline"},
                      float(sum(c.duration_s for c in job.baseline))))
    review = job.final_review
    if review is not None and review.commands and _runs(review.commands) != before.review:
        items.append((VALIDATION_SECONDS, {"phase": "final_review"},
                      float(sum(c.duration_s for c in review.commands))))
    items += ci_observations(before, job)
    tokens = _tokens(job)
    for direction, now, then in zip(("in", "out"), tokens, before.tokens, strict=True):
        if now > then:
            items.append((MODEL_TOKENS, {"direction": direction}, float(now - then)))
    return items


def observe(connection: redis.Redis, job: Job) -> None:
    """Count what the saved record shows happened since this job was last observed (by whoever
    changed it: a step, a command, a revert). Call it while holding the job's lease."""
    key = seen_key(job.id)
    try:
        before = seen_before(connection.get(key), job)
        items = observations(before, job)
        pipe = connection.pipeline(transaction=True)
        pipe.set(key, seen_of(job).model_dump_json(), ex=SEEN_TTL_S)
        for spec, labels, value in items:
            add(pipe, spec, labels, value)
        pipe.execute()
    except (redis.RedisError, ValueError) as exc:
        log.warning("metrics not recorded", extra={"job_id": job.id,
                                                   "error": type(exc).__name__})


# -- the webhook path -----------------------------------------------------------------------------
def counted_delivery(endpoint: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
    """Wrap the (async) webhook endpoint: bind the delivery to its logs, count it by event and
    outcome and time the acknowledgement; the count is written after the answer is sent."""
    @functools.wraps(endpoint)
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        delivery = str(kwargs.get("x_github_delivery") or "")[:100] or None
        event = str(kwargs.get("x_github_event") or "")
        with log_context.bind(delivery_id=delivery, event=event[:40] or None, trigger="webhook"):
            response = await endpoint(*args, **kwargs)
        seconds = time.perf_counter() - started
        request = kwargs.get("request")
        try:
            status = json.loads(bytes(response.body)).get("status", "")
        except (AttributeError, ValueError):
            status = ""
        outcome = OUTCOMES.get(status, "other" if response.status_code < 400 else "bad_request")
        if outcome == "queue_unavailable":  # Redis may be what failed: count it here too
            QUEUE_UNAVAILABLE.inc()
        label = "unverified" if outcome == "invalid_signature" else (
            event if event in GITHUB_EVENTS else "other")
        if request is not None and getattr(response, "background", True) is None:
            response.background = BackgroundTask(
                record_soon, request.app.state.webhook_lane, request.app.state.redis,
                [(DELIVERIES, {"event": label, "outcome": outcome}, 1.0),
                 (ACK_SECONDS, {"outcome": outcome}, seconds)])
        return response
    return wrapper


async def record_soon(lane: Any, connection: redis.Redis,
                      items: list[tuple[Spec, dict[str, str], float]]) -> None:
    """`record` once the answer is sent, on the webhook's Redis lane (bot/web/redis_deadline.py):
    a hung Redis costs the count, never the event loop."""
    with contextlib.suppress(TimeoutError):
        await lane.run(record, connection, items)
