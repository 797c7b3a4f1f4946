"""Gates: opening them, and every human verb on every gate kind (DESIGN's gate table)."""

from __future__ import annotations

from typing import Any

import pytest

from jobs.basics.errors import BadInputError, StateError
from jobs.basics.voice import LOCAL
from jobs.kernel.gates import RefusedError, Verb, apply_verb, open_gate
from jobs.kernel.job import Batch, Job
from jobs.kernel.model import GATES, Acceptance, BatchStatus, Gate, JobStatus
from tests.kit.records import T0, make_batch, make_job

# DESIGN.md "Gates, commands and exit codes": the verbs each gate takes (revert is its own command).
DESIGN_VERBS: dict[str, set[Verb]] = {
    Gate.PLAN: {Verb.APPROVE, Verb.CANCEL},
    Gate.MILESTONE: {Verb.APPROVE, Verb.CANCEL},
    Gate.SPEC_CHANGED: {Verb.APPROVE, Verb.CANCEL},
    Gate.LARGE_CHANGE: {Verb.APPROVE, Verb.SKIP, Verb.CANCEL},
    Gate.DELETION: {Verb.APPROVE, Verb.SKIP, Verb.CANCEL},
    Gate.SCOPE: {Verb.APPROVE, Verb.RETRY, Verb.SKIP, Verb.CANCEL},
    Gate.FAILURE: {Verb.APPROVE, Verb.RETRY, Verb.SKIP, Verb.CANCEL},
    Gate.HUMAN_COMMIT: {Verb.APPROVE, Verb.CANCEL},
    Gate.INTERRUPTED: {Verb.APPROVE, Verb.CANCEL},
}
# The features' gates, by the kind their records store (llm's `budget`, CI's `ci_failed`,
# evidence's `tests_weakened` and `uncovered_change`): their rows come with the feature, so a
# tree without it (scripts/removal_drill.py) has neither the row nor these cases.
FEATURE_VERBS: dict[str, set[Verb]] = {
    "budget": {Verb.APPROVE, Verb.SKIP, Verb.CANCEL},
    "ci_failed": {Verb.APPROVE, Verb.RETRY, Verb.SKIP, Verb.CANCEL},
    "tests_weakened": {Verb.APPROVE, Verb.RETRY, Verb.SKIP, Verb.CANCEL},
    "uncovered_change": {Verb.APPROVE, Verb.RETRY, Verb.SKIP, Verb.CANCEL},
}
DESIGN_VERBS.update({kind: verbs for kind, verbs in FEATURE_VERBS.items() if kind in GATES})
BATCHED_GATES = {Gate.LARGE_CHANGE, Gate.DELETION, Gate.SCOPE, Gate.FAILURE, "budget",
                 "ci_failed", "tests_weakened", "uncovered_change"}  # ci_failed: with per_batch


def gated_job(kind: str, *, batch_status: BatchStatus | None = None,
              status: JobStatus = JobStatus.RUNNING) -> Job:
    """A job with two batches, paused at a fresh `kind` gate (about batch 2 where that applies)."""
    if batch_status is None:
        batch_status = BatchStatus.FAILED if kind is Gate.FAILURE else BatchStatus.PENDING
    batches = [make_batch(1, status=BatchStatus.COMPLETED, commit="1" * 40),
               make_batch(2, status=batch_status, consecutive_failures=2)]
    job = make_job(batches=batches, status=status)
    open_gate(job, kind, reason="because", now=T0,
              batch=2 if kind in BATCHED_GATES else None,
              milestone=1 if kind is Gate.MILESTONE else None)
    return job


def snapshot(job: Job) -> dict[str, Any]:
    return job.model_dump(mode="json")


# --- the table itself ----------------------------------------------------------------------


BATCH_GATES = sorted(kind for kind, rule in GATES.items() if rule.lets_batch_through)


def test_accepted_matches_design() -> None:
    assert set(Gate) <= set(GATES)
    for kind, verbs in DESIGN_VERBS.items():
        assert set(GATES[kind].verbs) | {Verb.CANCEL} == verbs, kind


def test_batch_gates() -> None:
    assert [kind for kind in (Gate.DELETION, Gate.LARGE_CHANGE, Gate.SCOPE, "tests_weakened",
                              "uncovered_change") if kind in GATES] == BATCH_GATES


# --- open_gate -----------------------------------------------------------------------------


def test_open_gate_numbers_gates_and_waits() -> None:
    job = make_job(status=JobStatus.PLANNING)
    gate = open_gate(job, Gate.PLAN, reason="plan ready", now=T0)
    assert gate.id == "plan-1"
    assert job.gate == gate
    assert job.status is JobStatus.AWAITING_HUMAN
    assert job.gate_counter == 1
    apply_verb(job, Verb.APPROVE)
    second = open_gate(job, Gate.MILESTONE, reason="m1 done", now=T0, milestone=1)
    assert second.id == "milestone-2"
    assert (second.kind, second.milestone, second.opened_at) == (Gate.MILESTONE, 1, T0)


def test_open_gate_from_a_terminal_job_is_illegal() -> None:
    job = make_job(status=JobStatus.COMPLETED)
    with pytest.raises(StateError, match="illegal job transition"):
        open_gate(job, Gate.PLAN, reason="x", now=T0)


# --- approve -------------------------------------------------------------------------------


def test_approve_plan_binds_the_spec_digest_and_runs() -> None:
    job = make_job(status=JobStatus.PLANNING)
    open_gate(job, Gate.PLAN, reason="plan ready", now=T0)
    assert job.approved_digest is None
    message = apply_verb(job, Verb.APPROVE, gate_id="plan-1")
    assert message == "plan approved"
    assert job.approved_digest == job.spec_digest
    assert job.status is JobStatus.RUNNING
    assert job.gate is None


def test_approve_milestone_records_it() -> None:
    job = gated_job(Gate.MILESTONE)
    message = apply_verb(job, Verb.APPROVE)
    assert job.approved_milestones == [1]
    assert "milestone 1" in message
    assert job.status is JobStatus.RUNNING
    assert job.gate is None


def test_approve_spec_changed_replans() -> None:
    job = gated_job(Gate.SPEC_CHANGED)
    apply_verb(job, Verb.APPROVE)
    assert job.status is JobStatus.PLANNING
    assert job.gate is None
    assert job.approved_digest is None


@pytest.mark.parametrize("kind", BATCH_GATES)
def test_approve_batch_gate_lets_the_batch_through(kind: Gate) -> None:
    job = gated_job(kind)
    message = apply_verb(job, Verb.APPROVE)
    assert job.batch(2).approved_gates == [kind]
    assert job.batch(2).status is BatchStatus.PENDING
    assert job.batch(1).approved_gates == []
    assert job.status is JobStatus.RUNNING
    assert job.gate is None
    assert "batch 2" in message


@pytest.mark.parametrize("verb", [Verb.RETRY, Verb.APPROVE])
def test_failure_retry_resets_the_attempt_counter(verb: Verb) -> None:
    job = gated_job(Gate.FAILURE)
    assert job.batch(2).consecutive_failures == 2
    message = apply_verb(job, verb)
    assert job.batch(2).consecutive_failures == 0
    assert job.batch(2).status is BatchStatus.FAILED  # the engine retries it from here
    assert job.status is JobStatus.RUNNING
    assert job.gate is None
    assert "retried" in message


def test_scope_retry_does_not_accept_the_wider_batch() -> None:
    job = gated_job(Gate.SCOPE)
    message = apply_verb(job, Verb.RETRY)
    assert job.batch(2).approved_gates == []
    assert job.status is JobStatus.RUNNING
    assert "retried" in message


def test_approve_human_commit_accepts_the_branch_head() -> None:
    job = gated_job(Gate.HUMAN_COMMIT)
    apply_verb(job, Verb.APPROVE)
    assert job.accepted == [Acceptance.BRANCH_HEAD]
    assert job.status is JobStatus.RUNNING


@pytest.mark.parametrize("kind", [kind for kind in (Gate.INTERRUPTED, "budget") if kind in GATES])
def test_approve_resumes(kind: str) -> None:
    job = gated_job(kind)
    apply_verb(job, Verb.APPROVE)
    assert job.status is JobStatus.RUNNING
    assert job.gate is None


# --- skip ----------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", sorted(k for k in GATES if Verb.SKIP in GATES[k].verbs))
def test_skip_marks_the_batch_skipped_with_its_reason(kind: str) -> None:
    job = gated_job(kind)
    message = apply_verb(job, Verb.SKIP, reason="  generated code  ")
    assert job.batch(2).status is BatchStatus.SKIPPED
    assert job.batch(2).reason == "generated code"
    assert job.batch(1).status is BatchStatus.COMPLETED
    assert job.status is JobStatus.RUNNING
    assert job.gate is None
    files = ", ".join(job.batch(2).files)
    assert message == f"batch 2 skipped: generated code (its files are left unchanged: {files})"


@pytest.mark.parametrize(("reason", "refusal"), [
    ("", "needs a reason"), ("   ", "needs a reason"), ("\n\t", "needs a reason"),
    # its usage line's placeholder, pasted unedited (the CLI prints `REASON`, GitHub `<reason>`)
    ("REASON", "was given its placeholder"), ("<reason>", "was given its placeholder"),
    (" REASON ", "was given its placeholder")])
def test_skip_needs_a_reason(reason: str, refusal: str) -> None:
    job = gated_job(Gate.FAILURE)
    before = snapshot(job)
    with pytest.raises(RefusedError, match=refusal):
        apply_verb(job, Verb.SKIP, reason=reason)
    assert snapshot(job) == before


def test_skip_without_a_batch_is_refused() -> None:
    job = make_job(status=JobStatus.RUNNING, batches=[make_batch(1)])
    open_gate(job, Gate.SCOPE, reason="out of scope", now=T0)  # about no batch
    before = snapshot(job)
    with pytest.raises(RefusedError):
        apply_verb(job, Verb.SKIP, reason="too expensive")
    assert snapshot(job) == before


# --- cancel --------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", sorted(GATES))  # the built-in gates and the features'
def test_cancel_at_any_gate_cancels(kind: str) -> None:
    job = gated_job(kind)
    message = apply_verb(job, Verb.CANCEL)
    assert job.status is JobStatus.CANCELLED
    assert job.gate is None
    assert message == "job cancelled"


@pytest.mark.parametrize(
    ("status", "after"),
    [
        (JobStatus.RUNNING, JobStatus.CANCEL_REQUESTED),
        (JobStatus.PLANNING, JobStatus.CANCEL_REQUESTED),
        (JobStatus.QUEUED, JobStatus.CANCELLED),
        (JobStatus.INTERRUPTED, JobStatus.CANCELLED),
        (JobStatus.CANCEL_REQUESTED, JobStatus.CANCEL_REQUESTED),
    ],
)
def test_cancel_without_a_gate(status: JobStatus, after: JobStatus) -> None:
    job = make_job(status=status, batches=[make_batch(1)])
    message = apply_verb(job, Verb.CANCEL)
    assert job.status is after
    assert message


@pytest.mark.parametrize("status", sorted(JobStatus))
def test_cancel_never_leaves_an_illegal_state(status: JobStatus) -> None:
    job = make_job(status=status)
    if job.is_terminal:
        with pytest.raises(RefusedError, match=f"already {status}"):
            apply_verb(job, Verb.CANCEL)
        assert job.status is status
    else:
        apply_verb(job, Verb.CANCEL)
        assert job.status in {JobStatus.CANCELLED, JobStatus.CANCEL_REQUESTED}


# --- refusals ------------------------------------------------------------------------------


@pytest.mark.parametrize("status", [JobStatus.RUNNING, JobStatus.QUEUED, JobStatus.PLANNING,
                                    JobStatus.COMPLETED, JobStatus.AWAITING_HUMAN])
@pytest.mark.parametrize("verb", [Verb.APPROVE, Verb.RETRY, Verb.SKIP])
def test_no_open_gate_is_refused(status: JobStatus, verb: Verb) -> None:
    job = make_job(status=status, batches=[make_batch(1)])
    before = snapshot(job)
    with pytest.raises(RefusedError, match="no open gate") as caught:
        apply_verb(job, verb, reason="r")
    assert caught.value.code == "command_refused"
    assert "`stepwise status`" in LOCAL.speak(caught.value.hint)
    assert snapshot(job) == before


def test_gate_left_on_a_running_job_is_not_answerable() -> None:
    job = gated_job(Gate.PLAN)
    job.status = JobStatus.RUNNING
    before = snapshot(job)
    with pytest.raises(RefusedError, match="no open gate"):
        apply_verb(job, Verb.APPROVE)
    assert snapshot(job) == before


def test_stale_gate_id_is_refused() -> None:
    job = gated_job(Gate.FAILURE)
    before = snapshot(job)
    with pytest.raises(RefusedError) as caught:
        apply_verb(job, Verb.RETRY, gate_id="failure-0")
    assert caught.value.code == "stale_gate"
    assert "failure-0" in caught.value.message
    assert "failure-1" in caught.value.message
    assert snapshot(job) == before


def test_matching_gate_id_is_accepted() -> None:
    job = gated_job(Gate.FAILURE)
    apply_verb(job, Verb.RETRY, gate_id="failure-1")
    assert job.status is JobStatus.RUNNING


NOT_ACCEPTED = sorted(
    (kind, verb) for kind in GATES for verb in (Verb.APPROVE, Verb.RETRY, Verb.SKIP)
    if verb not in GATES[kind].verbs
)


@pytest.mark.parametrize(("kind", "verb"), NOT_ACCEPTED)
def test_verb_the_gate_does_not_take_is_refused(kind: str, verb: Verb) -> None:
    job = gated_job(kind)
    before = snapshot(job)
    with pytest.raises(RefusedError, match=f"`{verb}` does not apply to the `{kind}` gate") as caught:
        apply_verb(job, verb, reason="some reason")
    assert "cancel" in caught.value.hint
    for accepted in GATES[kind].verbs:
        assert accepted in caught.value.hint
    assert snapshot(job) == before


def test_refusals_are_bad_input() -> None:
    assert issubclass(RefusedError, BadInputError)


def test_verbs_do_not_touch_other_batches() -> None:
    job = gated_job(Gate.FAILURE)
    first: Batch = job.batch(1).model_copy(deep=True)
    apply_verb(job, Verb.SKIP, reason="flaky upstream")
    assert job.batch(1) == first
