"""The evidence feature's shared parts (issue 39): the `evidence:` and `gates:` config blocks,
the feature's part of a batch's record (kept through the store), and one vocabulary: a facet's
lines are the same in the gate, the check runs and the note's `## Evidence`."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from jobs.adapters.store import FileStore
from jobs.basics.errors import ConfigError
from jobs.decisions.edit_shapes import ShapeSummary
from jobs.features.evidence import parts
from jobs.features.evidence.coverage_record import CoverageRecord
from jobs.features.evidence.record import (
    AutoPassed,
    BatchEvidence,
    JobEvidence,
    batch_evidence,
    job_evidence,
)
from jobs.features.evidence.texts import FacetTexts, listed, share
from jobs.inputs.config import load_config
from jobs.kernel.job import Batch, Job, OpenGate
from jobs.kernel.model import Gate
from jobs.local import LocalSession
from tests.kit.local_e2e import NUMBER, Recorder, build_sample, issue, load_job


def test_the_evidence_and_gates_blocks_read_with_their_defaults() -> None:
    config = load_config("evidence:\n  min_changed_coverage: 80\ngates:\n"
                         "  auto_approve_known_shapes: true\n")
    assert config.evidence.coverage == "auto" and config.evidence.min_changed_coverage == 80
    assert config.gates.auto_approve_known_shapes is True
    assert load_config("evidence: {coverage: off}\n").evidence.coverage == "off"
    assert load_config(None).evidence.min_changed_coverage is None


@pytest.mark.parametrize(("text", "named"), [
    ("evidence: {min_changed_coverag: 80}\n", "unknown field `evidence.min_changed_coverag` (did you mean "
                                       "`min_changed_coverage`?"),
    ("evidence: {min_changed_coverage: 120}\n", "min_changed_coverage"),
    ("evidence: {coverage: always}\n", "coverage"),
    ("gates: {auto_approve: true}\n", "unknown field `gates.auto_approve`"),
    ("gates: [auto_approve_known_shapes]\n", "expected a mapping"),
])
def test_a_bad_evidence_or_gates_block_is_refused_by_name(text: str, named: str) -> None:
    with pytest.raises(ConfigError) as refused:
        load_config(text)
    assert named in str(refused.value)


def test_a_facet_s_part_of_a_batch_survives_the_store_typed_in_its_stored_shape(
        tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo")
    LocalSession(repo, NUMBER, sink=Recorder()).run(issue(), yes=True)
    job = load_job(repo)
    first, last = job.batches[0], job.batches[-1]
    first.part(BatchEvidence).coverage = CoverageRecord(measured=False, why="seen")
    job.part(JobEvidence).auto_passed = AutoPassed(milestones=[1])
    store = FileStore(repo / ".git" / "stepwise")
    store.save(job)
    stored = json.loads((store.batch_path(job.number, first.number)).read_text(encoding="utf-8"))
    assert stored["parts"]["evidence"]["coverage"]["why"] == "seen"  # a map of facet keys
    again = store.load(job.number)
    assert again is not None
    assert isinstance(again.batches[0].parts[BatchEvidence.PART], BatchEvidence)
    assert batch_evidence(again.batches[0]).coverage == CoverageRecord(measured=False, why="seen")
    assert job_evidence(again).auto_passed == AutoPassed(milestones=[1])
    assert batch_evidence(again.batches[-1]).coverage == batch_evidence(last).coverage


def test_a_facet_another_version_wrote_reads_as_not_recorded_and_the_record_loads() -> None:
    """A facet that does not fit this version's model, and a facet key this version has not,
    leave the record readable: the one reads as not recorded, the other is dropped."""
    batch = Batch.model_validate({
        "number": 1, "milestone": 1, "files": ["a.py"],
        "parts": {"evidence": {"coverage": {"measured": "sometimes"}, "from_a_newer_one": {},
                               "shapes": ShapeSummary(hunks=2).model_dump(mode="json")}}})
    found = batch_evidence(batch)
    assert found.coverage is None and found.shapes == ShapeSummary(hunks=2)
    assert "from_a_newer_one" not in batch.model_dump(mode="json")["parts"]["evidence"]
    bare = Batch(number=2, milestone=1, files=["b.py"])
    assert batch_evidence(bare).coverage is None and bare.parts == {}  # reading adds nothing


def test_a_facet_s_lines_read_the_same_in_the_gate_the_check_run_and_the_note(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = build_sample(tmp_path / "repo")
    LocalSession(repo, NUMBER, sink=Recorder()).run(issue(), yes=True)
    job = load_job(repo)
    facet = FacetTexts("seen", batch=lambda _job, batch: [f"seen batch {batch.number}"],
                       job=lambda _job: ["seen the job"])
    monkeypatch.setattr(parts, "FACETS", (facet,))
    batch = job.batches[0]
    assert parts.batch_lines(job, batch) == ["seen batch 1"]
    note = "\n".join(parts.note_lines(job))
    assert "## Evidence" in note and "- seen the job" in note
    assert "- Batch 1:\n  - seen batch 1" in note
    job.gate = OpenGate(id="g1", kind=Gate.LARGE_CHANGE, opened_at=datetime.now(UTC),
                        reason="big", batch=1)
    assert parts.gate_lines(job) == ["Evidence of batch 1:", "- seen batch 1"]


def test_the_shared_words() -> None:
    assert share(42, 45) == "42 of 45 (93%)"
    assert share(199, 200) == "199 of 200 (99%)"
    assert listed([f"a.py:{n}" for n in range(12)], limit=2) == "`a.py:0`, `a.py:1` and 10 more"


def test_a_batch_and_a_job_start_with_no_feature_part() -> None:
    assert Batch(number=1, milestone=1, files=["a.py"]).parts == {}
    assert Job.model_fields["parts"].default == {}
