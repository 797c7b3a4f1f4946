"""CI as a feature package (issue 29): its gate is the feature's own row with the stored kind
`ci_failed` (a record saved before the move reads back), its note section keeps its place in
the change note, and its `active` guard keeps a job without CI out of every hook: a local
`run --yes` runs no function of the CI feature but the guard and the plan's and card's text."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

from jobs.composition import FEATURES
from jobs.features.ci.parts import CI_FAILED
from jobs.features.ci.record import AWAITING_CI, CiResult, CiWait, awaiting_ci, ci
from jobs.features.ci.wait import active
from jobs.features.ci.wiring import FEATURE
from jobs.kernel.job import Batch, Job
from jobs.kernel.model import BATCH_TRANSITIONS, GATES, BatchStatus, JobStatus
from jobs.local import LocalSession
from jobs.notes.change_note import render_note
from jobs.notes.progress import status_mark
from tests.jobs.features.ci.test_ci_gate import at_ci_failed
from tests.kit.local_e2e import NUMBER, Recorder, build_sample, issue, load_job
from tests.kit.records import T0, make_batch, make_job

CI_FOLDER = str(Path(FEATURE.safe_point.__code__.co_filename).parent) + "/"  # type: ignore[union-attr]


def test_ci_s_safe_point_is_the_features_first_and_its_gate_is_installed() -> None:
    first = next(f for f in FEATURES if f.safe_point is not None)  # CI's verdict is the step
    assert first is FEATURE and FEATURE.name == "ci"
    rule = GATES[CI_FAILED]
    assert (rule.exit_code, rule.verb) == (4, "approve")
    assert rule.other_choices == ("retry", "skip <reason>", "revert <batch>", "cancel")


def test_a_record_stored_at_ci_failed_reads_back_with_its_gate() -> None:
    job = at_ci_failed("batch")
    document = job.model_dump(mode="json")
    assert document["gate"]["kind"] == "ci_failed"  # the stored kind did not change
    again = Job.model_validate(document)
    assert again.gate is not None and again.gate.kind == CI_FAILED and again.gate.exit_code == 4


def test_active_only_for_a_job_that_waits_for_ci_or_will() -> None:
    local = make_job(status=JobStatus.RUNNING)
    assert local.server.installation_id is None and not active(local)
    server = make_job(status=JobStatus.RUNNING)
    server.server.installation_id = 7
    assert active(server)
    server.config = server.config.model_copy(update={
        "ci": server.config.ci.model_copy(update={"wait": "off"})})
    assert not active(server)
    ci(local).wait = CiWait(sha="c" * 40, since=T0, scope="milestone", number=1)
    assert active(local)  # a server job resumed locally still settles its wait


def test_the_ci_section_stays_after_the_model_usage_and_before_the_final_review() -> None:
    batch = make_batch(1, status=BatchStatus.COMPLETED, files=["a.py"])
    batch.commit = "1" * 40
    job = make_job(batches=[batch], status=JobStatus.COMPLETED)
    ci(job).results = [CiResult(scope="milestone", number=1, sha="1" * 40, state="passed", at=T0)]
    note = render_note(job, now=T0 + timedelta(minutes=1))
    section = note.index("## The repository's CI")
    assert note.index("## Batches") < section < note.index("## Leftovers for a human to confirm")
    assert "- Milestone 1: CI on `1111111` passed: no checks reported" in note


@contextmanager
def ci_functions_called() -> Iterator[set[tuple[str, str]]]:
    """The (module, function) pairs of jobs/features/ci that ran inside the block."""
    called: set[tuple[str, str]] = set()

    def profile(frame: FrameType, event: str, _arg: Any) -> None:
        if event == "call" and frame.f_code.co_filename.startswith(CI_FOLDER):
            called.add((Path(frame.f_code.co_filename).name, frame.f_code.co_name))

    sys.setprofile(profile)
    try:
        yield called
    finally:
        sys.setprofile(None)


def test_a_local_job_crosses_none_of_the_ci_hooks(tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo")
    with ci_functions_called() as called:
        outcome = LocalSession(repo, NUMBER, sink=Recorder()).run(issue(), yes=True)
    assert outcome.status is JobStatus.COMPLETED and load_job(repo).status is JobStatus.COMPLETED
    modules = {module for module, _ in called}
    assert modules <= {"wait.py", "notes.py", "record.py"}, called  # record.py: reading its part
    assert {name for module, name in called if module == "wait.py"} == {"active"}
    # The plan says local mode has no CI; the card and the note have nothing to add.
    assert ("notes.py", "plan_ci_lines") in called


@pytest.mark.parametrize("current", [BatchStatus.PENDING, BatchStatus.IN_PROGRESS,
                                     BatchStatus.FAILED])
def test_awaiting_ci_is_entered_as_design_says(current: BatchStatus) -> None:
    """pushed (`in_progress`), or adopted from the branch (`pending`, `failed`)."""
    assert awaiting_ci() in BATCH_TRANSITIONS[current]


def test_awaiting_ci_is_left_as_design_says_and_stored_as_its_word() -> None:
    """Green completes it, red withdraws it (failed; pending without an attempt), `skip` at
    ci_failed skips it; the record keeps the word `awaiting_ci`, the card marks it ⧗."""
    assert BATCH_TRANSITIONS[awaiting_ci()] == {BatchStatus.COMPLETED, BatchStatus.FAILED,
                                                BatchStatus.PENDING, BatchStatus.SKIPPED}
    batch = make_batch(1, status=awaiting_ci())
    assert json.loads(batch.model_dump_json())["status"] == AWAITING_CI
    assert Batch.model_validate_json(batch.model_dump_json()).status is awaiting_ci()
    assert status_mark(batch.status) == "⧗"
