"""A feature's own part of the job record: `Job.parts[name]` and `Batch.parts[name]`, each a
`RecordPart` model the feature defines in its folder and registers through its `FeatureParts`
(jobs/kernel/feature_parts.py `job_part`, `batch_part`), so the kernel's record names no
feature's data.

A stored record's parts are read back with the registered models (a part that does not fit its
model refuses the record, as any other field would); a part no installed feature claims is kept
as it was written. A feature that moved its data out of the kernel names the record's former
fields (`former_fields`): a record written before the move reads them into the part
(jobs/kernel/record_upgrades.py `parts_from_fields`), and what a field-for-field mapping cannot
say (CI's red checks kept on each attempt) its `upgrade_batch` reads. An empty part is not written.

A part may hold the job waiting outside, with no worker: `RecordPart.awaited` says on which
commit (CI's wait for its verdict). The kernel knows only that generic notion: a job whose part
awaits something is not active (`Job.waiting_outside`), cancelling it stops the wait, and the
server wakes it when a check on that commit reports (`awaited_in` reads it from a stored
document without reading the whole record). The feature owns what it waits for and its words.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, ClassVar, TypeVar

from pydantic import BaseModel

from jobs.kernel.record_upgrades import parts_from_fields
from jobs.kernel.records import Record


@dataclass(frozen=True)
class Awaited:
    """What a part holds the job waiting for outside (CI's verdict): the commit a check reports
    on, when it was last looked at (the server looks again when nothing came for a while), the
    words `status` shows meanwhile ("waiting for CI: 3 of 5 checks done"), and whether a
    `revert` may land meanwhile (a milestone's head waits: yes; a batch's candidate, which may
    be withdrawn: no)."""

    sha: str
    looked_at: datetime
    says: str
    revertible: bool = False


class RecordPart(Record):
    """A feature's part of the record: `PART` is its key in `parts`; every field has a default
    (a job the feature has said nothing about holds the empty part)."""

    PART: ClassVar[str] = ""

    def is_empty(self) -> bool:
        return self == type(self)()

    def awaited(self) -> Awaited | None:
        """What this part holds the job waiting for outside, with no worker (None: nothing)."""
        return None

    def stop_waiting(self) -> None:
        """The job was cancelled: wait for nothing outside any more."""


# The installed features' part models by key, for the job and for its batches.
JOB_PARTS: dict[str, type[RecordPart]] = {}
BATCH_PARTS: dict[str, type[RecordPart]] = {}
# Fields the job (batch) record had before a feature's data moved into its part:
# former field -> (part key, the part's field). Filled by install_parts.
FORMER_JOB_FIELDS: dict[str, tuple[str, str]] = {}
FORMER_BATCH_FIELDS: dict[str, tuple[str, str]] = {}
# A feature's reading of a batch document of an earlier release, by part key, for what a
# field-for-field mapping cannot say (CI: the red checks each attempt kept). Filled by install_parts.
BATCH_UPGRADES: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {}


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


def part_read(parts: Mapping[str, Any], model: type[P]) -> P:
    """The `model` part of `parts` to read: an empty one, not put there, when it is missing (a
    reader changes nothing in the record)."""
    found = parts.get(model.PART)
    if isinstance(found, model):
        return found
    return model.model_validate(found.model_dump() if isinstance(found, BaseModel)
                                else found or {})


def raw_part(parts: Mapping[str, Any], name: str) -> dict[str, Any]:
    """A part as a plain mapping, for a module that may not import the feature's model (a pure
    room reading one key of it), as a dict: {} when there is none."""
    found = parts.get(name)
    if isinstance(found, BaseModel):
        return found.model_dump(mode="json")
    return dict(found) if isinstance(found, dict) else {}


def awaited_in(doc: Mapping[str, Any]) -> Awaited | None:
    """What a stored job document's parts hold it waiting for (`RecordPart.awaited`), reading
    only the parts that can wait (a document of an earlier release through its former fields);
    None when nothing, or when a part does not read."""
    parts = parts_from_fields(doc, FORMER_JOB_FIELDS).get("parts")
    if not isinstance(parts, dict):
        return None
    for name, value in parts.items():
        model = JOB_PARTS.get(name)
        if model is None or model.awaited is RecordPart.awaited or not isinstance(value, dict):
            continue
        try:
            found = model.model_validate(value).awaited()
        except ValueError:
            continue  # the worker that loads it says what is wrong
        if found is not None:
            return found
    return None
