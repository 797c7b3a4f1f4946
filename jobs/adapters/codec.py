"""The job document format both stores share (the file store here, the Redis store in server mode).

A job is kept as three parts: the document (the job without its batches and events, carrying
`version`, `batch_count` and `event_count`, plus a store's own bookkeeping such as
`events_size`), one JSON text per batch, and one JSON line per event, so recording a step
writes only what changed.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from jobs.kernel.job import Batch, Job
from jobs.kernel.records import Event

BOOKKEEPING = ("batch_count", "event_count", "events_size")  # document keys that are no Job field


# What readers of the raw document use (the reconciler, the task center's list) and
# the spec, whose `done_when` default depends on `find`: kept whole, defaults included.
WHOLE_FIELDS = ("id", "number", "title", "repo", "status", "created_at", "updated_at", "branch",
                "spec", "gate", "outbox", "server")


def document(job: Job, **bookkeeping: int) -> dict[str, Any]:
    """The document that records `job` as its next version: its fields at their defaults left
    out (about half the size), except WHOLE_FIELDS. Read back by `assemble`, the defaults fill
    in again, so it is the same job; documents written in full before load just as well."""
    doc = job.model_dump(mode="json", exclude={"batches", "events"}, exclude_defaults=True)
    doc.update(job.model_dump(mode="json", include=set(WHOLE_FIELDS)))
    doc.update(version=job.version + 1, batch_count=len(job.batches), event_count=len(job.events),
               **bookkeeping)
    return doc


def batch_text(batch: Batch, *, indent: int | None = None) -> str:
    """A batch without the fields at their defaults (read back, they are the defaults again):
    a third smaller, which is most of what a waiting job costs in Redis."""
    return batch.model_dump_json(indent=indent, exclude_defaults=True)


def event_line(event: Event) -> str:
    """An event line without its fields at their defaults (`assemble` reads full lines too)."""
    return event.model_dump_json(exclude_defaults=True)


def assemble(doc: dict[str, Any], batches: Iterable[Any], events: Iterable[Any]) -> Job:
    """The job of a stored document with its batches (in order) and events, each a JSON text
    or an already parsed mapping; raises ValueError or pydantic's ValidationError when the
    parts do not make a job. Each part becomes its record as it is read, so a job of 10,000
    batches never holds all of them twice (parsed and validated) at once."""
    fields = {key: value for key, value in doc.items() if key not in BOOKKEEPING}
    return Job.model_validate({**fields, "batches": [_record(Batch, b) for b in batches],
                               "events": [_record(Event, e) for e in events]})


def _record(kind: type[Batch] | type[Event], part: Any) -> Any:
    if isinstance(part, str | bytes):
        return kind.model_validate_json(part)
    return kind.model_validate(part)
