"""The job document format both stores share (the file store here, the Redis store in server mode).

A job is kept as three parts: the document (the job without its batches and events, carrying
`version`, `batch_count` and `event_count`, plus a store's own bookkeeping such as
`events_size`), one JSON text per batch, and one JSON line per event, so recording a step
writes only what changed.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from jobs.domain.model import Batch, Event, Job

BOOKKEEPING = ("batch_count", "event_count", "events_size")  # document keys that are no Job field


def document(job: Job, **bookkeeping: int) -> dict[str, Any]:
    """The document that records `job` as its next version."""
    doc = job.model_dump(mode="json", exclude={"batches", "events"})
    doc.update(version=job.version + 1, batch_count=len(job.batches), event_count=len(job.events),
               **bookkeeping)
    return doc


def batch_text(batch: Batch, *, indent: int | None = None) -> str:
    return batch.model_dump_json(indent=indent)


def event_line(event: Event) -> str:
    return event.model_dump_json()


def assemble(doc: dict[str, Any], batches: Iterable[Any], events: Iterable[Any]) -> Job:
    """The job of a stored document with its parsed batches (in order) and events; raises
    ValueError or pydantic's ValidationError when the parts do not make a job."""
    fields = {key: value for key, value in doc.items() if key not in BOOKKEEPING}
    return Job.model_validate({**fields, "batches": list(batches), "events": list(events)})
