"""The evidence feature's part of the record (pure): `Batch.parts["evidence"]` and
`Job.parts["evidence"]`, one key per facet, each read back with the facet's pydantic model."""

from __future__ import annotations

from typing import TypeVar

from pydantic import BaseModel, ValidationError

from jobs.kernel.job import Batch, Job
from jobs.kernel.record_parts import raw_part

PART = "evidence"
Model = TypeVar("Model", bound=BaseModel)


def batch_facet(batch: Batch, facet: str, model: type[Model]) -> Model | None:
    """The facet's record of `batch` (None when it has none, or one this version cannot read)."""
    return _read(raw_part(batch.parts, PART).get(facet), model)


def put_batch_facet(batch: Batch, facet: str, value: BaseModel | None) -> None:
    """Record (None: forget) the facet's part of `batch`; the batch must be saved as touched."""
    part = raw_part(batch.parts, PART)
    if value is None:
        part.pop(facet, None)
    else:
        part[facet] = value.model_dump(mode="json")
    batch.parts = {**batch.parts, PART: part}


def job_facet(job: Job, facet: str, model: type[Model]) -> Model | None:
    return _read(raw_part(job.parts, PART).get(facet), model)


def put_job_facet(job: Job, facet: str, value: BaseModel | None) -> None:
    part = raw_part(job.parts, PART)
    if value is None:
        part.pop(facet, None)
    else:
        part[facet] = value.model_dump(mode="json")
    job.parts = {**job.parts, PART: part}


def _read(data: object, model: type[Model]) -> Model | None:
    if data is None:
        return None
    try:
        return model.model_validate(data)
    except ValidationError:  # a part written by another version: shown as not recorded
        return None

