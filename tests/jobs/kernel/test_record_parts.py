"""A feature's part of the job record (jobs/kernel/record_parts.py): registered through its
`FeatureParts`, read back typed from a stored document, refused when it does not fit its model,
kept as written when no installed feature claims it, not written while empty, and filled from
the record's former fields in a document of an earlier release; a part that awaits something
outside holds the job with no worker."""

from __future__ import annotations

import json
from typing import Any, ClassVar

import pytest
from pydantic import Field, ValidationError

from jobs.kernel.feature_parts import FeatureParts, install_parts, installed
from jobs.kernel.job import Batch, Job
from jobs.kernel.model import JobStatus
from jobs.kernel.record_parts import Awaited, RecordPart, awaited_in
from jobs.kernel.records import Attempt
from tests.kit.records import T0, make_job


class Tally(RecordPart):
    PART: ClassVar[str] = "tally"

    count: int = 0


class Marks(RecordPart):
    PART: ClassVar[str] = "tally_marks"

    marks: list[int] = Field(default_factory=list)


TALLY = FeatureParts("tally", job_part=Tally, batch_part=Marks,
                     former_fields={"tally_count": "count"},
                     former_batch_fields={"tally_marks": "marks"})


def reread(job: Job) -> Job:
    return Job.model_validate_json(job.model_dump_json())


def test_a_registered_part_reads_back_typed_and_an_empty_one_is_not_written() -> None:
    with installed(TALLY):
        job = make_job(batches=[Batch(number=1, milestone=1, files=["a.py"])])
        assert job.part(Tally).count == 0
        assert "tally" not in json.loads(job.model_dump_json())["parts"]  # empty: not written
        job.part(Tally).count = 3
        job.batch(1).part(Marks).marks.append(7)
        again = reread(job)
        assert isinstance(again.parts["tally"], Tally) and again.part(Tally).count == 3
        assert again.batch(1).part(Marks).marks == [7]


def test_a_part_that_does_not_fit_its_model_refuses_the_record() -> None:
    with installed(TALLY):
        document = json.loads(make_job().model_dump_json())
        document["parts"] = {"tally": {"count": "many"}}
        with pytest.raises(ValidationError, match="count"):
            Job.model_validate(document)


def test_a_part_no_installed_feature_claims_is_kept_as_it_was_written() -> None:
    document = json.loads(make_job().model_dump_json())
    document["parts"] = {"removed_feature": {"anything": [1, 2]}}
    job = Job.model_validate(document)
    assert json.loads(job.model_dump_json())["parts"] == {"removed_feature": {"anything": [1, 2]}}


def test_the_former_fields_of_an_earlier_release_are_read_into_the_part() -> None:
    with installed(TALLY):
        document = json.loads(make_job(batches=[Batch(number=1, milestone=1, files=["a.py"])])
                              .model_dump_json())
        document["tally_count"] = 5
        document["batches"][0]["tally_marks"] = [1, 2]
        job = Job.model_validate(document)
        assert job.part(Tally).count == 5 and job.batch(1).part(Marks).marks == [1, 2]
        written = json.loads(job.model_dump_json())
        assert "tally_count" not in written and written["parts"]["tally"]["count"] == 5


def test_a_former_field_may_have_been_the_whole_part() -> None:
    whole = FeatureParts("tally", job_part=Tally, former_fields={"tally": ""})
    with installed(whole):
        document = json.loads(make_job().model_dump_json())
        document["tally"] = {"count": 4}
        assert Job.model_validate(document).part(Tally).count == 4


def test_a_former_field_is_unknown_once_its_feature_is_not_installed() -> None:
    document = json.loads(make_job().model_dump_json())
    document["tally_count"] = 5
    with pytest.raises(ValidationError, match="tally_count"):
        Job.model_validate(document)


def test_two_features_cannot_claim_one_part_key() -> None:
    with installed(TALLY), pytest.raises(ValueError, match="PART = 'tally'"):
        install_parts([FeatureParts("other", job_part=Tally)])


def test_former_fields_need_a_part_to_go_to() -> None:
    with pytest.raises(ValueError, match="no part of the record"):
        install_parts([FeatureParts("lost", former_fields={"x": "y"})])


class Outside(RecordPart):
    """A part that holds the job waiting outside (as CI's wait does)."""

    PART: ClassVar[str] = "outside"

    sha: str = ""

    def awaited(self) -> Awaited | None:
        return Awaited(self.sha, T0, f"waiting on {self.sha[:7]}") if self.sha else None

    def stop_waiting(self) -> None:
        self.sha = ""


def _attempt_notes(doc: dict[str, Any]) -> dict[str, Any]:
    """An earlier release kept a `note` on each attempt: read into the batch's part."""
    attempts = [dict(a) for a in doc.get("attempts", [])]
    notes = [a.pop("note") for a in attempts if isinstance(a, dict) and "note" in a]
    if not notes:
        return doc
    return {**doc, "attempts": attempts, "parts": {**doc.get("parts", {}),
                                                   "tally_marks": {"marks": notes}}}


OUTSIDE = FeatureParts("outside", job_part=Outside, batch_part=Marks,
                       upgrade_batch=_attempt_notes)


def test_a_part_that_awaits_something_outside_holds_the_job_without_a_worker() -> None:
    with installed(OUTSIDE):
        job = make_job(status=JobStatus.RUNNING)
        assert job.is_active and job.awaited() is None and not job.waiting_outside
        job.part(Outside).sha = "c" * 40
        assert not job.is_active and job.waiting_outside
        assert job.awaited() == Awaited("c" * 40, T0, "waiting on ccccccc")
        document = json.loads(job.model_dump_json())
        assert awaited_in(document) == job.awaited()  # read from the stored document
        job.stop_waiting()
        assert job.is_active and awaited_in(json.loads(job.model_dump_json())) is None


def test_a_feature_reads_what_field_names_cannot_say_from_an_earlier_batch_document() -> None:
    with installed(OUTSIDE):
        batch = json.loads(Batch(number=1, milestone=1, files=["a.py"], attempts=[
            Attempt(number=1, started_at=T0)]).model_dump_json())
        batch["attempts"][0]["note"] = 5
        read = Batch.model_validate(batch)
        assert read.part(Marks).marks == [5]
