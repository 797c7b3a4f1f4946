"""Adding a feature is one folder and one line (issue 29): the toy feature (this folder's
`__init__.py`) is given to local mode in one line, `features=(*FEATURES, toy.feature())`, and
then runs at the loop's named points: its safe-point hook holds the job, its own gate stops each
milestone until a person passes it, its part of the record keeps what was passed, and its section
is in the change note. The engine and the pure rooms were not edited for it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from jobs.composition import FEATURES
from jobs.engine.engine import SAFE_POINT
from jobs.kernel.feature_parts import install_parts, uninstall_parts
from jobs.kernel.job import Job
from jobs.kernel.model import BatchStatus, JobStatus, Verb
from jobs.local import LocalSession
from tests.jobs.features.toy import GATE, HELD, PARTS, Toy
from tests.kit.local_e2e import NUMBER, Recorder, build_sample, issue, load_job, show


@pytest.fixture(autouse=True)
def _toy_parts_taken_out_after() -> Iterator[None]:
    yield
    uninstall_parts("toy")  # the gate table is the process's: leave it as the other tests see it


def toy_session(repo: Path, toy: Toy) -> LocalSession:
    return LocalSession(repo, NUMBER, sink=Recorder(), features=(*FEATURES, toy.feature()))


def test_a_toy_feature_runs_at_every_safe_point_and_can_hold_the_job(tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo")
    toy = Toy(hold=True)
    held = toy_session(repo, toy).run(issue(), yes=True)
    assert (held.status, held.exit_code, held.message) == (JobStatus.RUNNING, 0, HELD)
    assert toy.seen == [0]  # the first safe point, before any batch
    toy.hold = False
    done = toy_session(repo, toy).run(issue(), yes=True)
    job = load_job(repo)
    assert done.status is JobStatus.COMPLETED and job.status is JobStatus.COMPLETED
    batches = sum(batch.status is BatchStatus.COMPLETED for batch in job.batches)
    after = toy.seen[1:]  # before each batch, each milestone's end and the end, in order
    assert after == sorted(after) and set(after) == set(range(batches + 1)), after


def test_the_toy_s_own_gate_stops_each_milestone_and_its_note_section_tells_it(
        tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo")
    toy = Toy(check_milestones=True)
    waiting = toy_session(repo, toy).run(issue(), yes=True)  # --yes passes plan gates, not it
    job = load_job(repo)
    assert job.gate is not None and job.gate.kind == GATE and job.gate.milestone == 1
    assert waiting.exit_code == 3 and "toy wants a look" in waiting.message
    order = []  # each milestone: the toy's gate first, then the milestone's own
    while job.status is JobStatus.AWAITING_HUMAN:
        assert job.gate is not None
        order.append((job.gate.kind, job.gate.milestone))
        message, _ = toy_session(repo, toy).verb(Verb.APPROVE)
        if job.gate.kind == GATE:
            assert message == f"toy check of milestone {job.gate.milestone} passed"
        job = load_job(repo)
    assert job.status is JobStatus.COMPLETED and job.milestone_count >= 2
    assert toy.ended == ["completed"]  # `at_end` ran once, when the job had just ended
    passes = job.milestone_count
    assert order == [(GATE, 1), ("milestone", 1), *[(GATE, m) for m in range(2, passes + 1)]]
    assert job.parts["toy"] == {"checked": list(range(1, job.milestone_count + 1))}
    note = show(repo, job.branch, job.note_path)
    assert "## Toy checks" in note and f"- milestone {passes}: looked at by a person" in note
    assert note.index("## Toy checks") < note.index("## Leftovers for a human to confirm")


def test_a_record_naming_a_gate_no_installed_feature_has_is_refused_by_name(
        tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo")
    toy = Toy(check_milestones=True)
    toy_session(repo, toy).run(issue(), yes=True)
    stored = load_job(repo).model_dump(mode="json")
    uninstall_parts("toy")
    with pytest.raises(ValueError, match=r"unknown gate kind 'toy_check': one of plan, "):
        Job.model_validate(stored)
    install_parts([PARTS])
    assert Job.model_validate(stored).gate is not None


def test_a_feature_gate_may_not_take_another_gate_s_name() -> None:
    from jobs.kernel.feature_parts import FeatureParts, GateRow
    row = PARTS.gates[0]
    with pytest.raises(ValueError, match="gate kind 'plan' is taken by another gate"):
        install_parts([FeatureParts(name="copycat", gates=(GateRow("plan", row.rule, row.passing),))])


def test_the_safe_point_runs_a_cancel_then_the_features_in_the_tuple_s_order() -> None:
    assert [hook.__name__ for hook in SAFE_POINT] == ["_cancel"]
    assert [feature.name for feature in FEATURES] == ["bisect", "ci", "branch", "base_moves", "llm",
                                                     "environments", "evidence"]
