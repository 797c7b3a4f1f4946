"""The evidence feature's part of the record (pure): `Batch.parts["evidence"]` (`BatchEvidence`)
and `Job.parts["evidence"]` (`JobEvidence`), one field per facet, each typed by the facet's
model; installed through parts.py, so a stored record is read with them. The stored shape is a
map of facet keys (`{"coverage": {...}, "shapes": {...}}`), as before these models: a facet
this version cannot read (written by another version) reads as not recorded, and a key no facet
has is dropped, so a record of another version still loads.

A new facet that keeps a record adds its field here (one line, like its texts in facets.py).
Read a part with `batch_evidence`/`job_evidence` (nothing is added to the record); change it
with `batch.part(BatchEvidence)`/`job.part(JobEvidence)`, then save the batch as touched."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidatorFunctionWrapHandler,
    field_validator,
)

from jobs.decisions.edit_shapes import ShapeSummary
from jobs.features.evidence.coverage_record import CoverageRecord, SubsetCoverage
from jobs.features.evidence.forecast import Forecast, History
from jobs.kernel.job import Batch, Job
from jobs.kernel.record_parts import RecordPart, part_read
from jobs.kernel.records import Record


class BatchTests(Record):
    """One batch's tests before and after, and what made them check less."""

    before: str = "not measured"  # "12 collected, 12 passed" or "not measured (why)"
    after: str = "not measured"
    findings: list[str] = Field(default_factory=list)  # Finding.line(), FINDINGS_KEPT at most
    more: int = 0  # findings left out of `findings`
    told_model: bool = False  # recipe llm: the finding went back to the model once
    accepted_by: str = ""  # who passed the gate with `approve`
    accepted: list[str] = Field(default_factory=list)  # what they accepted


class DryRun(BaseModel):
    """The plan's dry run: which batch's files it edited and the shapes it made."""

    batch: int
    files: int
    shapes: ShapeSummary


class AutoPassed(BaseModel):
    milestones: list[int] = []


class _Facets(RecordPart):
    """A map of facets, each typed: a key no facet has is dropped, a facet that does not fit its
    model (another version's) reads as not recorded."""

    model_config = ConfigDict(extra="ignore", validate_assignment=True)

    @field_validator("*", mode="wrap")
    @classmethod
    def _readable(cls, value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        try:
            return handler(value)
        except ValidationError:
            return None


class BatchEvidence(_Facets):
    """The facets' records of one batch."""

    PART: ClassVar[str] = "evidence"

    coverage: CoverageRecord | None = None  # the changed lines its tests ran (coverage facet)
    coverage_subsets: SubsetCoverage | None = None  # while it is split: each passing subset's
    tests: BatchTests | None = None  # its tests before and after (the integrity facet)
    shapes: ShapeSummary | None = None  # the kinds of edit it made


class JobEvidence(_Facets):
    """The facets' records of the job."""

    PART: ClassVar[str] = "evidence"

    history: History | None = None  # what earlier jobs on the repository measured
    forecast: Forecast | None = None  # the forecast as the plan stated it
    preview: DryRun | None = None  # the plan's dry run (edit shapes)
    auto_passed: AutoPassed | None = None  # milestones that passed their gate on their own


def batch_evidence(batch: Batch) -> BatchEvidence:
    """The facets' records of `batch`, to read (empty when it has none)."""
    return part_read(batch.parts, BatchEvidence)


def job_evidence(job: Job) -> JobEvidence:
    """The facets' records of `job`, to read (empty when it has none)."""
    return part_read(job.parts, JobEvidence)
