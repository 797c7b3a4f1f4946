"""The stores' lean records (jobs/adapters/codec.py `document`, `event_line`):
exact round trips, records written in the full format before still load and save, and every
reader of the raw document sees what it saw in the full one (real redis-server)."""

from __future__ import annotations

import json

import pytest
import redis

from bot.plumbing.idle_index import owes
from bot.plumbing.keys import batches_key, events_key, job_key
from bot.plumbing.redis_store import RedisStore
from bot.server.reconciler import _idle_facts, read_documents
from bot.taskcenter.records import parse_head
from jobs.adapters.codec import WHOLE_FIELDS, batch_text, document
from jobs.features.ci.record import CiJob, CiWait
from jobs.inputs.spec import DoneWhen
from jobs.kernel.job import Job
from jobs.kernel.model import JobStatus
from jobs.kernel.record_parts import awaited_in
from jobs.kernel.records import Event, OutboxEntry
from tests.kit.records import T0, full_document, full_event_line, full_job, make_batch, make_job


def jobs() -> list[Job]:
    """Jobs whose fields are set, unset and at their defaults in many combinations."""
    plain = make_job(batches=[make_batch(1), make_batch(2)], number=3)
    explicit = make_job(number=4)  # `done_when` at the field's default although `find` is set
    explicit.spec = explicit.spec.model_copy(update={"done_when": DoneWhen.CHECKS_PASS})
    waiting = make_job(number=5, status=JobStatus.RUNNING,
                       parts={CiJob.PART: CiJob(wait=CiWait(sha="1" * 40, since=T0,
                                                            scope="milestone", number=1))},
                       events=[Event(at=T0, kind="note", message="no batch")])
    return [full_job(), plain, explicit, waiting]


@pytest.mark.parametrize("job", jobs(), ids=lambda job: f"job-{job.number}")
def test_a_lean_record_loads_as_exactly_the_job_saved(client: redis.Redis, job: Job) -> None:
    job.repo = "octo/widgets"
    expected = job.model_dump(mode="json")
    RedisStore(client).save(job)
    loaded = RedisStore(client).load_id(job.id)  # another process: nothing remembered
    assert loaded is not None
    assert loaded.model_dump(mode="json") == {**expected, "version": 1}
    assert loaded.spec.done_when == job.spec.done_when


def test_the_lean_document_drops_defaults_but_keeps_what_raw_readers_use() -> None:
    job = make_job()
    full, lean = full_document(job), document(job)
    assert "config" not in lean or lean["config"] == {}  # every config field at its default
    assert "llm" not in lean and "error" not in lean
    assert all(lean[name] == full[name] for name in WHOLE_FIELDS)
    assert len(json.dumps(lean, separators=(",", ":"))) < len(json.dumps(full)) / 2


def test_a_record_written_in_the_full_format_still_loads_and_saves(client: redis.Redis) -> None:
    """What the store wrote before (full document with json.dumps' spaces, event lines with
    their defaults) loads as the same job, and a save over it is the next version."""
    job = full_job()
    job.repo = "octo/widgets"
    job.events.append(Event(at=T0, kind="note", message="no batch"))
    client.set(job_key(job.id), json.dumps(full_document(job)))
    client.hset(batches_key(job.id), mapping={str(b.number): batch_text(b) for b in job.batches})
    client.rpush(events_key(job.id), *(full_event_line(e) for e in job.events))
    store = RedisStore(client)
    loaded = store.load_id(job.id)
    assert loaded is not None
    assert loaded.model_dump(mode="json") == {**job.model_dump(mode="json"), "version": 1}
    loaded.title = "Renamed"
    store.save(loaded)
    again = RedisStore(client).load_id(job.id)
    assert again is not None and again.version == 2 and again.title == "Renamed"
    assert again.model_dump(mode="json", exclude={"version", "title"}) == \
        job.model_dump(mode="json", exclude={"version", "title"})


@pytest.mark.parametrize("job", jobs(), ids=lambda job: f"job-{job.number}")
def test_raw_readers_see_the_same_facts_in_a_lean_document(client: redis.Redis, job: Job) -> None:
    job.repo = "octo/widgets"
    if job.number == 3:
        job.outbox = [OutboxEntry(key="card", kind="progress", since=T0)]
    full = json.loads(json.dumps(full_document(job)))
    RedisStore(client).save(job)
    lean = read_documents(client, [job.id])[job.id]
    assert parse_head(json.dumps(lean)) == parse_head(json.dumps(full))
    assert owes(lean) == owes(full)
    assert _idle_facts(lean) == _idle_facts(full)
    assert {k: lean.get(k) for k in ("status", "version")} == \
        {k: full.get(k) for k in ("status", "version")}
    assert awaited_in(lean) == awaited_in(full)
