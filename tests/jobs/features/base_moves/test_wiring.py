"""base_moves as a feature (issue 29): its line of the features' tuple runs its safe-point hook
only for a job that follows a base, its `conflict` gate is its own row with the kind records
store, and its note section keeps the place the "Base merges" section always had."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from pydantic import ValidationError

from jobs.basics.errors import ErrorInfo, RetryClass
from jobs.composition import FEATURES
from jobs.features.base_moves.merge import follows_a_base
from jobs.features.base_moves.parts import BASE_MERGE, CONFLICT, PARTS
from jobs.features.base_moves.record import BaseConflict, BaseMerge, moves
from jobs.features.base_moves.wiring import FEATURE
from jobs.features.ci.record import CiResult, ci
from jobs.inputs.config import load_config
from jobs.kernel.feature_parts import FailureRow, FeatureParts, install_parts
from jobs.kernel.gates import Verb, apply_verb, gate_choices, open_gate
from jobs.kernel.job import Job, OpenGate
from jobs.kernel.model import GATES, Acceptance, Gate, JobStatus
from jobs.kernel.records import LeftOut
from jobs.notes.change_note import render_note
from jobs.notes.progress import render_card
from tests.kit.records import make_batch, make_job

T0 = datetime(2024, 5, 17, tzinfo=UTC)
BASE = "d" * 40


def job_on(policy: str = "conflicted", *, base_branch: str = "main") -> Job:
    job = make_job(batches=[make_batch(1)], status=JobStatus.RUNNING)
    job.base_branch, job.config = base_branch, load_config(f"update_from_base: {policy}\n")
    return job


def test_the_feature_is_one_line_of_the_tuple_in_the_place_base_moves_had() -> None:
    names = [feature.name for feature in FEATURES]
    assert FEATURE in FEATURES and names.index("base_moves") == names.index("branch") + 1
    assert FEATURE.parts is PARTS and FEATURE.safe_point is not None


@pytest.mark.parametrize("policy", ["conflicted", "behind"])
def test_a_job_on_a_base_branch_that_merges_it_runs_the_hook(policy: str) -> None:
    assert follows_a_base(job_on(policy))


def test_a_detached_start_or_a_job_on_its_own_branch_runs_none_of_it() -> None:
    assert not follows_a_base(job_on(base_branch="HEAD"))
    own = job_on()
    own.base_branch = own.branch
    assert not follows_a_base(own)


def test_never_skips_the_hook_unless_a_merge_or_a_conflict_is_on_record() -> None:
    job = job_on("never")
    assert not follows_a_base(job)
    moves(job).conflict = BaseConflict(base_sha=BASE, files=["a.py"])  # a maintainer may resolve it
    assert follows_a_base(job)
    moves(job).conflict = None
    moves(job).merges = [BaseMerge(base_sha=BASE, commit="e" * 40, at=T0)]  # it may never land
    assert follows_a_base(job)


def test_the_conflict_gate_is_the_feature_s_row_under_the_kind_records_store() -> None:
    assert CONFLICT == "conflict" and CONFLICT not in Gate.__members__.values()
    assert GATES[CONFLICT] is PARTS.gates[0].rule and GATES[CONFLICT].exit_code == 4
    job = job_on()
    open_gate(job, CONFLICT, reason="the base conflicts", now=T0)
    stored = Job.model_validate(job.model_dump(mode="json"))  # a record from before reads back
    assert stored.gate is not None and stored.gate.kind == "conflict"
    assert apply_verb(stored, Verb.APPROVE) == ("continuing on the branch as the maintainer "
                                               "resolved the conflict")
    assert stored.accepted == [Acceptance.BRANCH_HEAD]


def test_the_base_merges_section_stays_between_the_left_out_files_and_the_ci() -> None:
    job = job_on()
    job.left_out = [LeftOut(path="setup.py", rule="protected_paths")]
    moves(job).merges = [BaseMerge(base_sha=BASE, commit="e" * 40, at=T0)]
    ci(job).results = [CiResult(scope="milestone", number=1, sha="f" * 40, state="passed", at=T0)]
    note = render_note(job, now=T0)
    assert (note.index("## Left out") < note.index("## Base merges")
            < note.index("## The repository's CI") < note.index("## Leftovers for a human"))


def test_the_card_closes_with_the_base_s_merges_and_a_move_not_looked_at_yet() -> None:
    job = job_on()
    assert "Base `main`" not in render_card(job)
    moves(job).merges = [BaseMerge(base_sha=BASE, commit="e" * 40, at=T0)]
    open_gate(job, Gate.MILESTONE, reason="done", now=T0, milestone=1)
    moves(job).moved_at = T0
    card = render_card(job)
    assert card.endswith("`main` moved at 2024-05-17 00:00Z; it is looked at when the job goes "
                         "on (update_from_base: conflicted).")
    assert "\n\nBase `main` merged 1 time(s); last: base `ddddddd` merged in `eeeeeee`\n" in card


def test_a_failed_merge_is_the_feature_s_cause_of_failure_and_reads_back_by_its_name() -> None:
    job = job_on()
    report = ErrorInfo(code="base_merge_failed", retry_class=RetryClass.NEEDS_HUMAN, message="m",
                       hint="h", evidence={"base_sha": BASE})
    open_gate(job, Gate.FAILURE, reason="merging failed", now=T0, report=report, cause=BASE_MERGE)
    stored = Job.model_validate(job.model_dump(mode="json"))
    assert stored.gate is not None and stored.gate.cause == "base_merge"
    assert gate_choices(stored, stored.gate).usage == "approve"  # its row's meaning of approve
    assert apply_verb(stored, Verb.APPROVE) == ("going on without merging the base (until it "
                                               "moves again)")
    assert moves(stored).declined == BASE


def test_a_cause_no_one_installed_is_refused_naming_the_ones_there_are() -> None:
    refused = r"unknown failure cause 'base_merged': one of base_merge, batch,"
    with pytest.raises(ValidationError, match=refused):
        OpenGate.model_validate({"id": "failure-1", "kind": "failure", "opened_at": T0,
                                 "reason": "r", "cause": "base_merged"})


def test_a_feature_cannot_take_a_cause_another_has() -> None:
    row = FailureRow(BASE_MERGE, PARTS.failure_causes[0].passing)
    taken = FeatureParts(name="copycat", failure_causes=(row,))
    with pytest.raises(ValueError, match="failure cause 'base_merge' is taken"):
        install_parts([taken])
