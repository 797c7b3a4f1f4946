"""A feature's own part of the job record: `Job.parts[name]` and `Batch.parts[name]`, each a
`RecordPart` model the feature defines in its folder and registers through its `FeatureParts`
(jobs/kernel/feature_parts.py `job_part`, `batch_part`), so the kernel's record names no
feature's data.

A stored record's parts are read back with the registered models (a part that does not fit its
model refuses the record, as any other field would); a part no installed feature claims is kept
as it was written. A feature that moved its data out of the kernel names the record's former
fields (`former_fields`): a record written before the move reads them into the part
(jobs/kernel/record_upgrades.py `parts_from_fields`). An empty part is not written.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, TypeVar

from pydantic import BaseModel

from jobs.kernel.records import Record


class RecordPart(Record):
    """A feature's part of the record: `PART` is its key in `parts`; every field has a default
    (a job the feature has said nothing about holds the empty part)."""

    PART: ClassVar[str] = ""

    def is_empty(self) -> bool:
        return self == type(self)()


# The installed features' part models by key, for the job and for its batches.
JOB_PARTS: dict[str, type[RecordPart]] = {}
BATCH_PARTS: dict[str, type[RecordPart]] = {}
# Fields the job (batch) record had before a feature's data moved into its part:
# former field -> (part key, the part's field). Filled by install_parts.
FORMER_JOB_FIELDS: dict[str, tuple[str, str]] = {}
FORMER_BATCH_FIELDS: dict[str, tuple[str, str]] = {}


def typed(parts: Any, models: Mapping[str, type[RecordPart]]) -> Any:
    """`parts` as read from a document: each registered part through its model."""
    if not isinstance(parts, dict):
        return parts
    return {name: models[name].model_validate(value)
            if name in models and not isinstance(value, models[name]) else value
            for name, value in parts.items()}


def written(parts: Mapping[str, Any]) -> dict[str, Any]:
    """The parts worth writing: every part but an empty one."""
    return {name: value for name, value in parts.items()
            if not (isinstance(value, RecordPart) and value.is_empty())}


P = TypeVar("P", bound=RecordPart)


def part_in(parts: dict[str, Any], model: type[P]) -> P:
    """The `model` part of `parts`, put there (empty) when it is missing, so that changing it
    changes the record."""
    found = parts.get(model.PART)
    if isinstance(found, model):
        return found
    made = model.model_validate(found.model_dump() if isinstance(found, BaseModel)
                                else found or {})
    parts[model.PART] = made
    return made


def raw_part(parts: Mapping[str, Any], name: str) -> dict[str, Any]:
    """A part kept as a plain mapping (a feature that reads it key by key, as evidence does its
    facets), as a dict: {} when there is none."""
    found = parts.get(name)
    if isinstance(found, BaseModel):
        return found.model_dump(mode="json")
    return dict(found) if isinstance(found, dict) else {}
