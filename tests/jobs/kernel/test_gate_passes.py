"""The pass table (jobs/kernel/gate_passes.py, issue 29 item 1): every gate kind has one row and
every cause of `failure` one sub-row, keyed by the gate's typed `cause`, never by a report's
code; what a passed gate lets the next step accept is typed state used up once; and records
written before (the `accept_*` flags, a `failure` gate without its cause) read the same way."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from jobs.basics.errors import ErrorInfo, RetryClass
from jobs.composition import FEATURES
from jobs.kernel.gate_passes import FAILURE_PASSES, PASSES
from jobs.kernel.gates import apply_verb, gate_choices, open_gate
from jobs.kernel.job import Job, OpenGate
from jobs.kernel.model import (
    FAILURE_CAUSES,
    GATES,
    Acceptance,
    BatchStatus,
    FailureCause,
    Gate,
    JobStatus,
    Verb,
)
from tests.kit.records import T0, make_batch, make_job

BASE = "d" * 40
BASE_MERGE = "base_merge"  # base_moves' failure cause, when the tree has the feature
WITH_BASE_MOVES = BASE_MERGE in FAILURE_CAUSES


def declined(job: Job) -> str | None:
    """The base commit whose failed merge a human let pass (base_moves' part, when the tree has
    the feature), read from the record as stored."""
    part = job.model_dump(mode="json")["parts"].get("base_moves") or {}
    return part.get("declined")


def failed(cause: str, *, code: str = "something_else") -> Job:
    """A job at a `failure` gate of `cause`, whose report's code says nothing of the cause."""
    batches = [make_batch(1, status=BatchStatus.FAILED, consecutive_failures=3)]
    job = make_job(batches=batches, status=JobStatus.RUNNING)
    report = ErrorInfo(code=code, retry_class=RetryClass.NEEDS_HUMAN, message="m", hint="h",
                       evidence={"base_sha": BASE})
    open_gate(job, Gate.FAILURE, reason="r", now=T0, report=report, cause=cause,
              batch=1 if cause is FailureCause.BATCH else None)
    return job


def test_every_gate_kind_has_one_row_and_every_failure_cause_one_sub_row() -> None:
    features = {row.kind for f in FEATURES if f.parts is not None for row in f.parts.gates}
    assert set(PASSES) == set(GATES) == set(Gate) | features
    assert set(FAILURE_PASSES) == FAILURE_CAUSES == {*FailureCause} | (
        {BASE_MERGE} if any(f.name == "base_moves" for f in FEATURES) else set())


@pytest.mark.parametrize(("cause", "message", "effect"), [row for row in [
    (FailureCause.BATCH, "batch 1 will be retried (attempt counter reset)",
     lambda job: job.batch(1).consecutive_failures == 0),
    (FailureCause.FINAL_REVIEW, "finishing although the final review did not pass",
     lambda job: job.accepted == [Acceptance.FAILED_REVIEW]),
    (BASE_MERGE, "going on without merging the base (until it moves again)",
     lambda job: declined(job) == BASE),
    (FailureCause.FAULT, "gate failure passed",
     lambda job: job.accepted == [] and declined(job) is None),
] if row[0] != BASE_MERGE or WITH_BASE_MOVES])
def test_approve_at_failure_means_what_the_cause_row_says(
        cause: FailureCause, message: str, effect: Callable[[Job], bool]) -> None:
    job = failed(cause)
    assert apply_verb(job, Verb.APPROVE) == message
    assert effect(job) and job.status is JobStatus.RUNNING and job.gate is None


def test_the_prompt_recommends_approve_by_cause_not_by_report_code() -> None:
    review = failed(FailureCause.FINAL_REVIEW)
    assert review.gate is not None and gate_choices(review, review.gate).usage == "approve"
    fault = failed(FailureCause.FAULT, code="final_review_failed")  # a code alone means nothing
    assert fault.gate is not None and gate_choices(fault, fault.gate).usage == "retry"


def test_a_failure_gate_opened_without_a_cause_is_about_its_batch_or_a_fault() -> None:
    job = make_job(batches=[make_batch(1, status=BatchStatus.FAILED)], status=JobStatus.RUNNING)
    assert open_gate(job, Gate.FAILURE, reason="r", now=T0, batch=1).cause is FailureCause.BATCH
    job.gate, job.status = None, JobStatus.RUNNING
    assert open_gate(job, Gate.FAILURE, reason="r", now=T0).cause is FailureCause.FAULT
    job.gate, job.status = None, JobStatus.RUNNING
    assert open_gate(job, Gate.PLAN, reason="r", now=T0, cause=FailureCause.FAULT).cause is None


def test_retry_at_a_failed_review_accepts_nothing_and_an_acceptance_is_used_once() -> None:
    job = failed(FailureCause.FINAL_REVIEW)
    apply_verb(job, Verb.RETRY)
    assert job.accepted == [] and not job.take(Acceptance.FAILED_REVIEW)
    job = failed(FailureCause.FINAL_REVIEW)
    apply_verb(job, Verb.APPROVE)
    assert job.take(Acceptance.FAILED_REVIEW) and not job.take(Acceptance.FAILED_REVIEW)


@pytest.mark.parametrize(("code", "batch", "cause"), [row for row in [
    ("final_review_failed", None, FailureCause.FINAL_REVIEW),
    ("base_merge_failed", None, BASE_MERGE),  # base_moves' cause, by its name
    ("validation_failed", 1, FailureCause.BATCH),
    ("push_failed", None, FailureCause.FAULT),
] if row[2] != BASE_MERGE or WITH_BASE_MOVES])
def test_a_stored_failure_gate_without_a_cause_reads_with_the_one_its_code_meant(
        code: str, batch: int | None, cause: str) -> None:
    stored = {"id": "failure-1", "kind": "failure", "opened_at": T0.isoformat(), "reason": "r",
              "batch": batch, "report": {"code": code, "retry_class": "needs_human",
                                         "message": "m", "hint": "h"}}
    assert OpenGate.model_validate(stored).cause == cause


def test_the_former_one_shot_flags_read_as_acceptances() -> None:
    doc = make_job().model_dump(mode="json", exclude={"accepted"})
    doc |= {"accept_review": True, "accept_branch_head": True}
    job = Job.model_validate(doc)
    assert job.accepted == [Acceptance.FAILED_REVIEW, Acceptance.BRANCH_HEAD]
    assert Job.model_validate(job.model_dump(mode="json")) == job
