"""The job record: the transition tables, gate exit codes, batch lookup and the JSON round trip.

`make_job` / `make_batch` here are also used by test_gates, test_notes and test_store.
"""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from jobs.basics.errors import StateError
from jobs.basics.voice import LOCAL
from jobs.kernel.feature_parts import FeatureParts, install_parts, installed
from jobs.kernel.job import Batch, Job, OpenGate
from jobs.kernel.model import (
    BATCH_TRANSITIONS,
    FINISHED_BATCH_STATUSES,
    GATES,
    JOB_TRANSITIONS,
    TERMINAL_JOB_STATUSES,
    Acceptance,
    BatchStatus,
    BatchStatusRow,
    Gate,
    JobStatus,
    Verb,
    batch_statuses,
    feature_status,
    transition,
)
from jobs.kernel.records import Attempt, CommandEvidence, PendingIssue, PullRequest, ServerState, Target
from tests.kit.records import T0, full_job, make_batch, make_job

# --- transition tables ---------------------------------------------------------------------


LEGAL_JOB = sorted((a, b) for a, targets in JOB_TRANSITIONS.items() for b in targets)
ILLEGAL_JOB = sorted(
    (a, b) for a in JobStatus for b in JobStatus if b not in JOB_TRANSITIONS[a]
)
LEGAL_BATCH = sorted((a, b) for a, targets in BATCH_TRANSITIONS.items() for b in targets)
ILLEGAL_BATCH = sorted(
    (a, b) for a in BatchStatus for b in BatchStatus if b not in BATCH_TRANSITIONS[a]
)


def test_tables_cover_every_status() -> None:
    assert set(JOB_TRANSITIONS) == set(JobStatus)
    assert set(BATCH_TRANSITIONS) == set(batch_statuses())


@pytest.mark.parametrize(
    ("current", "new"),
    [
        # DESIGN "Statuses": the paths the product promises
        (JobStatus.QUEUED, JobStatus.PLANNING),
        (JobStatus.PLANNING, JobStatus.RUNNING),
        (JobStatus.PLANNING, JobStatus.AWAITING_HUMAN),
        (JobStatus.RUNNING, JobStatus.AWAITING_HUMAN),
        (JobStatus.AWAITING_HUMAN, JobStatus.RUNNING),
        (JobStatus.RUNNING, JobStatus.COMPLETED),
        (JobStatus.RUNNING, JobStatus.CANCEL_REQUESTED),
        (JobStatus.CANCEL_REQUESTED, JobStatus.CANCELLED),
        (JobStatus.QUEUED, JobStatus.CANCELLED),
        (JobStatus.AWAITING_HUMAN, JobStatus.CANCELLED),
        (JobStatus.RUNNING, JobStatus.INTERRUPTED),
        (JobStatus.INTERRUPTED, JobStatus.QUEUED),
        (JobStatus.RUNNING, JobStatus.FAILED),
    ],
)
def test_design_job_transitions_are_legal(current: JobStatus, new: JobStatus) -> None:
    assert new in JOB_TRANSITIONS[current]


@pytest.mark.parametrize(
    ("current", "new"),
    [
        (BatchStatus.PENDING, BatchStatus.IN_PROGRESS),
        (BatchStatus.IN_PROGRESS, BatchStatus.COMPLETED),
        (BatchStatus.IN_PROGRESS, BatchStatus.FAILED),
        (BatchStatus.IN_PROGRESS, BatchStatus.SKIPPED),
        (BatchStatus.COMPLETED, BatchStatus.REVERTED),
        # not in DESIGN's list: `approve` at human_commit after a rewrite that dropped its commit
        (BatchStatus.COMPLETED, BatchStatus.PENDING),
    ],
)
def test_design_batch_transitions_are_legal(current: BatchStatus, new: BatchStatus) -> None:
    assert new in BATCH_TRANSITIONS[current]


def test_terminal_statuses_have_no_way_out_but_resume() -> None:
    assert {JobStatus.COMPLETED, JobStatus.CANCELLED, JobStatus.FAILED} == TERMINAL_JOB_STATUSES
    assert JOB_TRANSITIONS[JobStatus.COMPLETED] == frozenset()
    for status in (JobStatus.CANCELLED, JobStatus.FAILED):  # `/stepwise resume`
        assert JOB_TRANSITIONS[status] == {JobStatus.PLANNING, JobStatus.RUNNING}
    assert BATCH_TRANSITIONS[BatchStatus.SKIPPED] == frozenset()
    assert BATCH_TRANSITIONS[BatchStatus.REVERTED] == frozenset()
    assert {BatchStatus.COMPLETED, BatchStatus.SKIPPED, BatchStatus.REVERTED} == (
        FINISHED_BATCH_STATUSES
    )


@pytest.mark.parametrize(("current", "new"), LEGAL_JOB)
def test_every_legal_job_transition(current: JobStatus, new: JobStatus) -> None:
    job = make_job(status=current)
    job.set_status(new)
    assert job.status is new


@pytest.mark.parametrize(("current", "new"), ILLEGAL_JOB)
def test_illegal_job_transition_raises_and_changes_nothing(current: JobStatus, new: JobStatus) -> None:
    job = make_job(status=current)
    with pytest.raises(StateError, match=f"illegal job transition {current} -> {new}"):
        job.set_status(new)
    assert job.status is current


@pytest.mark.parametrize(
    ("current", "new"),
    [
        (JobStatus.COMPLETED, JobStatus.RUNNING),
        (JobStatus.CANCELLED, JobStatus.QUEUED),
        (JobStatus.FAILED, JobStatus.QUEUED),
        (JobStatus.QUEUED, JobStatus.RUNNING),
        (JobStatus.QUEUED, JobStatus.COMPLETED),
        (JobStatus.AWAITING_HUMAN, JobStatus.COMPLETED),
        (JobStatus.CANCEL_REQUESTED, JobStatus.RUNNING),
        (JobStatus.RUNNING, JobStatus.RUNNING),
        (JobStatus.RUNNING, JobStatus.QUEUED),
    ],
)
def test_named_illegal_job_transitions(current: JobStatus, new: JobStatus) -> None:
    assert (current, new) in ILLEGAL_JOB
    job = make_job(status=current)
    with pytest.raises(StateError) as caught:
        job.set_status(new)
    assert caught.value.code == "state_error"
    assert caught.value.hint
    assert job.status is current


@pytest.mark.parametrize(("current", "new"), LEGAL_BATCH)
def test_every_legal_batch_transition(current: BatchStatus, new: BatchStatus) -> None:
    batch = make_batch(1, status=current)
    batch.set_status(new)
    assert batch.status is new


@pytest.mark.parametrize(("current", "new"), ILLEGAL_BATCH)
def test_illegal_batch_transition_raises_and_changes_nothing(
    current: BatchStatus, new: BatchStatus
) -> None:
    batch = make_batch(1, status=current)
    with pytest.raises(StateError, match=f"illegal batch transition {current} -> {new}"):
        batch.set_status(new)
    assert batch.status is current


@pytest.mark.parametrize(
    ("current", "new"),
    [
        (BatchStatus.SKIPPED, BatchStatus.COMPLETED),
        (BatchStatus.REVERTED, BatchStatus.COMPLETED),
        (BatchStatus.COMPLETED, BatchStatus.SKIPPED),
        (BatchStatus.PENDING, BatchStatus.REVERTED),
        (BatchStatus.PENDING, BatchStatus.FAILED),
    ],
)
def test_named_illegal_batch_transitions(current: BatchStatus, new: BatchStatus) -> None:
    assert (current, new) in ILLEGAL_BATCH


# --- gates ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("gate", "code"),
    [(gate, code) for gate, code in (
        (Gate.PLAN, 3), (Gate.MILESTONE, 3), (Gate.SPEC_CHANGED, 3), (Gate.LARGE_CHANGE, 3),
        (Gate.DELETION, 3), (Gate.SCOPE, 3), (Gate.FAILURE, 4), (Gate.HUMAN_COMMIT, 4),
        (Gate.INTERRUPTED, 4),
        ("budget", 4), ("ci_failed", 4),  # llm's and CI's gates, when the tree has them
    ) if gate in GATES],
)
def test_gate_exit_codes_match_design(gate: Gate, code: int) -> None:
    assert GATES[gate].exit_code == code
    assert OpenGate(id=f"{gate}-1", kind=gate, opened_at=T0, reason="r").exit_code == code


def test_every_built_in_gate_has_a_row() -> None:
    assert set(Gate) <= set(GATES)


# --- lookups -------------------------------------------------------------------------------


def test_batch_lookup_and_milestones() -> None:
    job = make_job(batches=[make_batch(1, 1), make_batch(2, 1), make_batch(3, 2)])
    assert job.batch(3).milestone == 2
    assert [b.number for b in job.milestone_batches(1)] == [1, 2]
    assert job.milestone_batches(9) == []
    assert job.milestone_count == 2
    assert make_job().milestone_count == 0


@pytest.mark.parametrize("number", [0, 4, -1])
def test_unknown_batch_raises(number: int) -> None:
    job = make_job(batches=[make_batch(1), make_batch(2), make_batch(3)])
    with pytest.raises(StateError) as caught:
        job.batch(number)
    assert caught.value.code == "unknown_batch"
    assert f"batch {number} does not exist" in caught.value.message
    assert "3 batches" in caught.value.message
    assert "`stepwise status`" in LOCAL.speak(caught.value.hint)


def test_is_terminal() -> None:
    assert make_job(status=JobStatus.CANCELLED).is_terminal
    assert not make_job(status=JobStatus.AWAITING_HUMAN).is_terminal


def test_last_attempt_and_target_display() -> None:
    batch = make_batch(1)
    assert batch.last_attempt is None
    batch.attempts = [Attempt(number=1, started_at=T0), Attempt(number=2, started_at=T0)]
    assert batch.last_attempt is not None
    assert batch.last_attempt.number == 2
    assert str(Target(path="src/a.py", line=3)) == "src/a.py:3"
    assert CommandEvidence(argv=["ruff", "check", "."], exit_code=0, duration_s=0.1).display == (
        "ruff check ."
    )


def test_records_forbid_unknown_fields_and_validate_assignment() -> None:
    with pytest.raises(ValueError, match="extra"):
        Batch(number=1, milestone=1, files=[], colour="red")  # type: ignore[call-arg]
    batch = make_batch(1)
    with pytest.raises(ValueError, match="status"):
        batch.status = "nonsense"  # type: ignore[assignment]


# --- JSON round trip -----------------------------------------------------------------------


def test_json_round_trip_of_a_full_job() -> None:
    job = full_job()
    text = job.model_dump_json()
    again = Job.model_validate_json(text)
    assert again == job
    assert again.model_dump(mode="json") == job.model_dump(mode="json")
    assert again.spec == job.spec
    assert again.spec.digest() == job.spec_digest
    assert again.config == job.config
    assert again.created_at == T0
    assert again.created_at.tzinfo is not None
    assert again.gate is not None
    assert again.gate.kind is Gate.FAILURE
    assert again.batch(1).status is BatchStatus.COMPLETED
    assert again.batch(1).approved_gates == [Gate.LARGE_CHANGE]
    assert again.batches[0].attempts[0].commands[0].duration_s == 2.5
    assert again.model_dump_json() == text


def test_job_json_keeps_the_config_alias() -> None:
    job = full_job()
    dumped = job.model_dump(mode="json", by_alias=True)
    assert Job.model_validate(dumped) == job


def test_a_record_that_kept_gate_answers_in_extra_reads_them_as_fields() -> None:
    doc = full_job().model_dump(mode="json", exclude={"accepted", "pending_issue",
                                                      "untrusted_spec", "server"})
    doc["extra"] = {"accept_review": True, "pending_issue": {"title": "t", "body": "b"},
                    "untrusted_spec": True}
    job = Job.model_validate(doc)
    assert job.accepted == [Acceptance.FAILED_REVIEW]  # the former one-shot flag, now typed
    assert job.pending_issue == PendingIssue(title="t", body="b") and job.untrusted_spec
    assert job.server == ServerState()


def test_a_record_with_server_keys_in_extra_reads_them_typed_and_drops_the_rest() -> None:
    doc = make_job().model_dump(mode="json", exclude={"server"})
    pull = {"number": 41, "node_id": "PR_1", "url": "https://github.com/o/r/pull/41",
            "draft": False}
    doc["extra"] = {"installation_id": 7, "pull": pull, "comments": {"plan": 5}, "rebuilt": True,
                    "queue_position": 2, "interruptions": 1, "transient_failures": 2,
                    "retry_scheduled": True, "started_by": "maria", "merged": True,
                    "drafted_spec": True, "draft_transcript": ".git/stepwise/x.md"}
    job = Job.model_validate(doc)
    assert job.server == ServerState(
        installation_id=7, pull=PullRequest(number=41, node_id="PR_1", draft=False,
                                            url="https://github.com/o/r/pull/41"),
        comments={"plan": 5}, rebuilt=True, queue_position=2, interruptions=1,
        transient_failures=2, retry_scheduled=True)
    assert "extra" not in job.model_dump() and job.server.installation() == 7
    assert Job.model_validate_json(job.model_dump_json()) == job


def test_an_old_pull_that_is_no_mapping_reads_as_no_pull_request() -> None:
    doc = make_job().model_dump(mode="json", exclude={"server"})
    doc["extra"] = {"pull": 3, "installation_id": 1}
    job = Job.model_validate(doc)
    assert job.server.pull is None and job.server.installation_id == 1


def test_a_job_without_an_installation_says_so() -> None:
    with pytest.raises(StateError, match="no GitHub App installation"):
        make_job().server.installation()


def test_extra_is_no_field_any_more() -> None:
    with pytest.raises(ValidationError):
        make_job(surprise=True)
    assert "extra" not in Job.model_fields


def test_every_gate_has_one_rule_and_the_views_follow_it() -> None:
    assert set(Gate) <= set(GATES)
    for rule in GATES.values():
        assert rule.verb in rule.verbs and Verb.CANCEL not in rule.verbs
        assert "cancel" in rule.other_choices


def test_transition_moves_along_the_tables_only() -> None:
    batch = make_batch(1, status=BatchStatus.COMPLETED, commit="1" * 40)
    transition(batch, BatchStatus.PENDING)  # its commit left the branch
    assert batch.status is BatchStatus.PENDING
    with pytest.raises(StateError):
        transition(batch, BatchStatus.REVERTED)
    job = make_job(status=JobStatus.RUNNING)
    assert job.is_active
    transition(job, JobStatus.COMPLETED)
    assert job.is_terminal and not job.is_active


def test_a_record_that_kept_its_campaign_in_the_server_part_reads_it_on_the_job() -> None:
    """Records written when only the App's jobs knew their campaign (`server.part_of`)."""
    doc = make_job().model_dump(mode="json")
    doc["server"]["part_of"] = "octo-org/widgets#2"
    job = Job.model_validate(doc)
    assert job.part_of == "octo-org/widgets#2"
    assert "part_of" not in job.server.model_dump()
    assert Job.model_validate_json(job.model_dump_json()).part_of == "octo-org/widgets#2"


HELD = BatchStatusRow("awaiting_toy", entered_from=frozenset({BatchStatus.IN_PROGRESS}),
                      leaves_to=frozenset({BatchStatus.COMPLETED}), mark="?", validated=True)


def test_a_feature_adds_a_batch_status_with_its_edges_and_takes_it_back() -> None:
    with installed(FeatureParts("toy", batch_statuses=(HELD,))):
        held = BatchStatus("awaiting_toy")
        assert held in batch_statuses() and feature_status(held) == HELD
        batch = Batch(number=1, milestone=1, files=["a.py"], status=BatchStatus.IN_PROGRESS)
        batch.set_status(held)
        again = Batch.model_validate_json(batch.model_dump_json())  # stored as its word
        assert again.status is held and json.loads(batch.model_dump_json())["status"] == \
            "awaiting_toy"
        with pytest.raises(StateError, match="illegal batch transition"):
            again.set_status(BatchStatus.PENDING)
        again.set_status(BatchStatus.COMPLETED)
        with pytest.raises(ValueError, match="taken"):
            install_parts([FeatureParts("copy", batch_statuses=(HELD,))])
    assert "awaiting_toy" not in {s.value for s in batch_statuses()}
    assert all(held not in targets for targets in BATCH_TRANSITIONS.values())
    with pytest.raises(ValidationError):
        Batch.model_validate({"number": 1, "milestone": 1, "files": [], "status": "awaiting_toy"})
