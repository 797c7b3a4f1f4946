"""The document format both stores share: a job split into its document, batches and events
and put together again is the same job, whichever store wrote it."""

from __future__ import annotations

import json
from pathlib import Path

import redis

from bot.plumbing.keys import job_key
from bot.plumbing.redis_store import RedisStore
from jobs.adapters.codec import BOOKKEEPING, assemble, batch_text, document, event_line
from jobs.adapters.store import FileStore
from tests.kit.records import full_job


def test_a_job_survives_the_split_and_the_next_version_is_recorded() -> None:
    job = full_job()
    doc = document(job, events_size=123)
    assert doc["version"] == job.version + 1 and doc["events_size"] == 123
    assert (doc["batch_count"], doc["event_count"]) == (len(job.batches), len(job.events))
    again = assemble(json.loads(json.dumps(doc)),
                     [json.loads(batch_text(b, indent=1)) for b in job.batches],
                     [json.loads(event_line(e)) for e in job.events])
    assert again.model_dump(mode="json") == {**job.model_dump(mode="json"), "version": job.version + 1}


def test_both_stores_write_the_same_document(tmp_path: Path, redis_url: str) -> None:
    connection = redis.Redis.from_url(redis_url)
    connection.flushdb()
    job = full_job()
    FileStore(tmp_path).save(job.model_copy(deep=True))
    RedisStore(connection).save(job.model_copy(deep=True))
    on_disk = json.loads(FileStore(tmp_path).path_for(job.number).read_text())
    in_redis = json.loads(connection.get(job_key(job.id)) or b"{}")
    assert on_disk.pop("events_size") > 0
    assert on_disk == in_redis == document(job)
    assert set(BOOKKEEPING) - set(in_redis) == {"events_size"}
