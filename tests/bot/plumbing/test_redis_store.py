"""The Redis job store against a real redis-server: round trip, compare-and-set, per-batch writes, damage."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
import redis
from redis.client import Pipeline

from bot.plumbing.idle_index import kinds_of
from bot.plumbing.keys import PREFIX, idle_key, issue_key, job_key
from bot.plumbing.redis_store import RedisStore
from jobs.adapters.store import ConflictError
from jobs.basics.errors import StateError
from jobs.kernel.job import Job
from jobs.kernel.model import BatchStatus, JobStatus
from jobs.kernel.records import Event
from tests.kit.records import T0, full_job, make_batch, make_job

REPO = "octo/widgets"
ARG = re.compile(r'"((?:[^"\\]|\\.)*)"')


@pytest.fixture
def store(client: redis.Redis) -> RedisStore:
    return RedisStore(client)


def github_job(number: int = 7, *, job_id: str | None = None, minutes: int = 0, **extra: Any) -> Job:
    job = make_job(number=number, **extra)
    job.repo = REPO
    job.id = job_id or f"{number}-{minutes:04d}"
    job.created_at = T0 + timedelta(minutes=minutes)
    return job


def stored_bytes(client: redis.Redis, job_id: str) -> tuple[Any, Any]:
    return client.get(job_key(job_id)), client.hgetall(f"{job_key(job_id)}:batches")


# --- round trip and versions -----------------------------------------------------------------


def test_full_job_round_trips(store: RedisStore) -> None:
    job = full_job()
    expected = job.model_dump(mode="json")
    store.save(job)
    loaded = store.load_id(job.id)
    assert loaded is not None
    assert loaded.model_dump(mode="json") == {**expected, "version": 1}
    assert loaded == job  # save bumped the caller's copy to the stored version
    assert loaded.batch(1).attempts[0].commands[0].duration_s == 2.5
    assert [b.number for b in loaded.batches] == [1, 2, 3]
    assert store.reload(job) == loaded


def test_batch_order_is_numeric_not_lexical(store: RedisStore) -> None:
    job = github_job(batches=[make_batch(n, 1 + n // 4) for n in range(1, 13)])
    store.save(job)
    loaded = store.load_id(job.id)
    assert loaded is not None and [b.number for b in loaded.batches] == list(range(1, 13))


def test_each_save_bumps_the_version(store: RedisStore) -> None:
    job = github_job()
    assert job.version == 0
    for expected in (1, 2, 3):
        returned = store.save(job)
        assert returned.version == job.version == expected
        loaded = store.load_id(job.id)
        assert loaded is not None and loaded.version == expected


def test_unchanged_tells_whether_a_save_would_write_anything_new(store: RedisStore) -> None:
    job = github_job(batches=[make_batch(1)])
    store.save(job)
    assert store.unchanged(job)  # as written
    loaded = store.load_id(job.id)
    assert loaded is not None and store.unchanged(loaded)  # as read
    loaded.title = "another title"
    assert not store.unchanged(loaded)
    store.save(loaded)
    assert store.unchanged(loaded)
    loaded.batch(1).summary = "changed"
    assert not store.unchanged(loaded)  # a batch counts
    store.save(loaded)
    assert store.unchanged(loaded)
    loaded.events.append(Event(at=T0, kind="note", message="one more"))
    assert not store.unchanged(loaded)  # so does a new event
    assert not RedisStore(store.redis).unchanged(loaded)  # another process knows nothing of it


def test_missing_job_loads_as_none(store: RedisStore) -> None:
    assert store.load_id("nope") is None
    assert store.reload(github_job(job_id="nope")) is None
    assert store.find(REPO, 99) is None


# --- compare-and-set -------------------------------------------------------------------------


def test_stale_save_is_a_conflict_and_leaves_the_record_unchanged(store: RedisStore,
                                                                 client: redis.Redis) -> None:
    job = github_job(batches=[make_batch(1), make_batch(2)])
    store.save(job)
    first, second = store.load_id(job.id), store.load_id(job.id)
    assert first is not None and second is not None
    first.batch(1).set_status(BatchStatus.IN_PROGRESS)
    store.save(first)
    before = stored_bytes(client, job.id)
    second.title = "stale title"
    second.batch(2).set_status(BatchStatus.IN_PROGRESS)
    with pytest.raises(ConflictError) as conflict:
        store.save(second)
    assert conflict.value.hint
    assert second.version == 1  # the caller's copy is not bumped
    assert stored_bytes(client, job.id) == before
    again = store.load_id(job.id)
    assert again is not None and again.version == 2 and again.title == job.title
    assert [b.status for b in again.batches] == [BatchStatus.IN_PROGRESS, BatchStatus.PENDING]


def test_new_job_over_an_existing_record_is_a_conflict(store: RedisStore, client: redis.Redis) -> None:
    store.save(github_job())
    before = stored_bytes(client, "7-0000")
    with pytest.raises(ConflictError):
        store.save(github_job())  # version 0 again: someone else created it first
    assert stored_bytes(client, "7-0000") == before


def test_save_after_the_record_was_deleted_is_a_state_error(store: RedisStore,
                                                           client: redis.Redis) -> None:
    job = github_job(batches=[make_batch(1)])
    store.save(job)
    loaded = store.load_id(job.id)
    assert loaded is not None
    RedisStore(client).delete(loaded)  # another worker or an operator removed it
    loaded.batch(1).set_status(BatchStatus.IN_PROGRESS)
    with pytest.raises(StateError) as gone:
        store.save(loaded)
    assert not isinstance(gone.value, ConflictError)
    assert "disappeared" in gone.value.message and gone.value.hint
    assert stored_bytes(client, job.id) == (None, {})  # nothing was resurrected


def test_delete_removes_the_record_and_its_index_entry(store: RedisStore, client: redis.Redis) -> None:
    job = github_job(batches=[make_batch(1)])
    store.save(job)
    store.delete(job)
    assert stored_bytes(client, job.id) == (None, {})
    assert store.job_ids() == []
    assert store.load_id(job.id) is None
    assert store.find(REPO, job.number) is None


# --- lookups -----------------------------------------------------------------------------------


def test_find_returns_the_latest_job_for_the_issue(store: RedisStore) -> None:
    old = github_job(7, job_id="7-old", minutes=0)
    other_issue = github_job(8, job_id="8-only", minutes=1)
    new = github_job(7, job_id="7-new", minutes=2)
    for job in (old, other_issue, new):
        store.save(job)
    store.save(old)  # saving the older job again does not make it the issue's job
    found = store.find(REPO, 7)
    assert found is not None and found.id == "7-new"
    eight = store.find(REPO, 8)
    assert eight is not None and eight.id == "8-only"
    assert store.find("octo/other", 7) is None
    assert store.find(REPO, 9) is None


def test_find_uses_the_job_repo_without_a_github_repo(store: RedisStore) -> None:
    job = make_job(number=3)
    store.save(job)
    found = store.find(job.repo, 3)
    assert found is not None and found.id == job.id


def test_job_ids_newest_first_with_limit_and_offset(store: RedisStore) -> None:
    ids = []
    for minutes in (5, 1, 4, 2, 3):  # saved out of creation order
        job = github_job(minutes, minutes=minutes)
        store.save(job)
        ids.append((minutes, job.id))
    newest = [job_id for _, job_id in sorted(ids, reverse=True)]
    assert store.job_ids() == newest
    assert store.job_ids(limit=2) == newest[:2]
    assert store.job_ids(limit=2, offset=1) == newest[1:3]
    assert store.job_ids(limit=10, offset=4) == newest[4:]
    assert store.job_ids(offset=5) == []
    assert store.job_ids(newest_first=False) == newest[::-1]
    assert store.job_ids(newest_first=False, limit=2, offset=1) == newest[::-1][1:3]


def test_job_ids_with_limit_zero_is_empty(store: RedisStore) -> None:
    for minutes in range(3):
        store.save(github_job(minutes, minutes=minutes))
    assert store.job_ids(limit=0) == []


# --- batches in their own hash: cost independent of job size ------------------------------------


def monitor_writes(client: redis.Redis, action: Callable[[], object]) -> list[list[str]]:
    """The commands (as argument lists) Redis executed while `action` ran, via MONITOR."""
    sentinel = "stepwise-test-monitor-end"
    with client.monitor() as monitor:  # type: ignore[no-untyped-call]  # active once +OK came back
        action()
        client.echo(sentinel)
        commands: list[list[str]] = []
        while True:
            raw = monitor.connection.read_response()
            text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
            args = [match.group(1) for match in ARG.finditer(text.split("] ", 1)[1])]
            if [a.upper() for a in args[:1]] == ["ECHO"] and args[1:] == [sentinel]:
                return commands
            commands.append(args)


def hash_writes(commands: list[list[str]], job_id: str) -> list[list[str]]:
    key = f"{job_key(job_id)}:batches"
    return [c for c in commands if c[0].upper() in ("HSET", "HMSET", "HDEL", "DEL") and key in c[1:]]


@pytest.mark.parametrize("same_store", [True, False], ids=["same-worker", "other-worker"])
def test_changing_one_batch_of_a_thousand_writes_one_field(
    store: RedisStore, client: redis.Redis, same_store: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STEPWISE_STORE_CHECK", "0")  # the check re-reads everything on purpose
    job = github_job(batches=[make_batch(n, 1 + (n - 1) // 20) for n in range(1, 1001)])
    first = monitor_writes(client, lambda: store.save(job))
    (initial,) = hash_writes(first, job.id)
    assert initial[0].upper() == "HSET" and (len(initial) - 2) // 2 == 1000

    writer = store if same_store else RedisStore(redis.Redis(connection_pool=client.connection_pool))
    current = job if same_store else writer.load_id(job.id)
    assert current is not None
    current.batch(517).set_status(BatchStatus.IN_PROGRESS)
    current.set_status(JobStatus.PLANNING)
    commands = monitor_writes(client, lambda: writer.save(current))
    writes = hash_writes(commands, job.id)
    assert len(writes) == 1, writes
    verb, key, *fields = writes[0]
    assert (verb.upper(), key, fields[0], len(fields)) == ("HSET", f"{job_key(job.id)}:batches", "517", 2)
    assert not [c for c in commands if c[0].upper() in ("HGETALL", "HVALS", "HKEYS")]  # no re-read
    loaded = store.load_id(job.id)
    assert loaded is not None and loaded.status is JobStatus.PLANNING
    assert [b.number for b in loaded.batches if b.status is BatchStatus.IN_PROGRESS] == [517]
    assert len(loaded.batches) == 1000


def test_unchanged_batches_write_nothing_and_a_removed_batch_is_deleted(store: RedisStore,
                                                                       client: redis.Redis) -> None:
    job = github_job(batches=[make_batch(n) for n in range(1, 6)])
    store.save(job)
    job.title = "renamed"
    assert hash_writes(monitor_writes(client, lambda: store.save(job)), job.id) == []
    job.batches = job.batches[:4]
    writes = hash_writes(monitor_writes(client, lambda: store.save(job)), job.id)
    assert [[w[0].upper(), *w[2:]] for w in writes] == [["HDEL", "5"]]
    loaded = store.load_id(job.id)
    assert loaded is not None and [b.number for b in loaded.batches] == [1, 2, 3, 4]
    assert loaded.title == "renamed"


# --- damaged records -----------------------------------------------------------------------------


@pytest.mark.parametrize("garbage", [b"{not json", b"\xff\xfe\x00", b'{"version": 1}'],
                         ids=["syntax", "bytes", "missing-fields"])
def test_damaged_record_is_a_state_error_with_a_hint(store: RedisStore, client: redis.Redis,
                                                    garbage: bytes) -> None:
    job = github_job(batches=[make_batch(1)])
    store.save(job)
    client.set(job_key(job.id), garbage)
    with pytest.raises(StateError) as damaged:
        store.load_id(job.id)
    assert job.id in damaged.value.message and "damaged" in damaged.value.message
    assert damaged.value.hint
    with pytest.raises(StateError):
        store.find(REPO, job.number)


def test_damaged_batch_is_a_state_error(store: RedisStore, client: redis.Redis) -> None:
    job = github_job(batches=[make_batch(1), make_batch(2)])
    store.save(job)
    client.hset(f"{job_key(job.id)}:batches", "2", "{truncated")
    with pytest.raises(StateError) as damaged:
        store.load_id(job.id)
    assert damaged.value.hint


@pytest.mark.parametrize("garbage", [b"[]", b"null", b"42"])
def test_non_object_record_is_a_state_error(store: RedisStore, client: redis.Redis, garbage: bytes) -> None:
    job = github_job()
    store.save(job)
    client.set(job_key(job.id), garbage)
    with pytest.raises(StateError):
        store.load_id(job.id)


def test_save_over_a_damaged_record_is_a_state_error(store: RedisStore, client: redis.Redis) -> None:
    job = github_job()
    store.save(job)
    client.set(job_key(job.id), b"{not json")
    with pytest.raises(StateError):
        store.save(job)
    assert client.get(job_key(job.id)) == b"{not json"


# --- two workers --------------------------------------------------------------------------------


def test_two_workers_racing_on_one_version_exactly_one_wins(client: redis.Redis) -> None:
    seed = github_job(batches=[make_batch(n) for n in range(1, 4)])
    RedisStore(client).save(seed)
    workers = [RedisStore(redis.Redis(connection_pool=client.connection_pool)) for _ in range(2)]
    rounds = 15
    for round_no in range(rounds):
        copies = [w.load_id(seed.id) for w in workers]
        barrier = threading.Barrier(2)
        outcome: dict[int, str] = {}

        def race(index: int, copies: list[Job | None] = copies, barrier: threading.Barrier = barrier,
                 outcome: dict[int, str] = outcome, round_no: int = round_no) -> None:
            job = copies[index]
            assert job is not None
            job.title = f"round {round_no} by worker {index}"
            job.batch(1 + index).summary = f"round {round_no} by worker {index}"
            barrier.wait()
            try:
                workers[index].save(job)
                outcome[index] = "won"
            except ConflictError:
                outcome[index] = "conflict"

        threads = [threading.Thread(target=race, args=(i,)) for i in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=10)
        assert sorted(outcome.values()) == ["conflict", "won"], outcome
        winner = next(i for i, result in outcome.items() if result == "won")
        stored = RedisStore(client).load_id(seed.id)
        assert stored is not None and stored.version == round_no + 2
        assert stored.title == f"round {round_no} by worker {winner}"
        loser = 1 - winner  # wrote nothing: neither its document nor its batch
        assert stored.batch(1 + loser).summary != f"round {round_no} by worker {loser}"
        assert stored.batch(1 + winner).summary == f"round {round_no} by worker {winner}"


class _InterleavingPipeline(Pipeline):
    hook: Callable[[], None] | None = None

    def multi(self) -> None:
        hook, type(self).hook = type(self).hook, None
        if hook is not None:
            hook()  # another worker saves between this save's version check and its EXEC
        super().multi()


def test_a_save_that_loses_the_race_after_its_version_check_is_a_conflict(client: redis.Redis) -> None:
    seed = github_job(batches=[make_batch(1)])
    RedisStore(client).save(seed)
    rival = RedisStore(redis.Redis(connection_pool=client.connection_pool))
    rival_copy = rival.load_id(seed.id)
    assert rival_copy is not None

    class Interleaving(redis.Redis):
        def pipeline(self, transaction: bool = True, shard_hint: Any = None) -> Pipeline:
            return _InterleavingPipeline(self.connection_pool, self.response_callbacks, transaction,
                                         shard_hint)

    slow = RedisStore(Interleaving(connection_pool=client.connection_pool))
    mine = slow.load_id(seed.id)
    assert mine is not None

    def rival_saves() -> None:
        rival_copy.title = "rival"
        rival.save(rival_copy)

    _InterleavingPipeline.hook = rival_saves
    mine.title = "mine"
    with pytest.raises(ConflictError):
        slow.save(mine)
    assert _InterleavingPipeline.hook is None  # the interleaving really happened
    stored = RedisStore(client).load_id(seed.id)
    assert stored is not None and (stored.title, stored.version) == ("rival", 2)
    assert mine.version == 1


def test_keys_live_under_the_stepwise_prefix(store: RedisStore, client: redis.Redis) -> None:
    job = github_job(batches=[make_batch(1)])
    store.save(job)
    keys = sorted(k.decode() if isinstance(k, bytes) else k for k in client.keys("*"))
    indexes = [idle_key(kind) for kind in kinds_of(json.loads(client.get(job_key(job.id))))]
    assert indexes  # an active job is in the reconciler's `active` index
    assert all(key.startswith(PREFIX) for key in keys)
    assert keys == sorted([job_key(job.id), f"{job_key(job.id)}:batches", issue_key(REPO, 7),
                           f"{PREFIX}jobs", *indexes])


def test_a_record_written_with_extra_reads_its_keys_typed_and_saves_without_it(
        store: RedisStore, client: redis.Redis) -> None:
    job = github_job(number=4)
    store.save(job)
    doc = json.loads(client.get(job_key(job.id)))
    del doc["server"]
    doc["extra"] = {"installation_id": 11, "interruptions": 2, "comments": {"card": 77},
                    "merged": True, "github_repo": REPO}
    client.set(job_key(job.id), json.dumps(doc))
    loaded = store.load_id(job.id)
    assert loaded is not None and loaded.server.installation_id == 11
    assert loaded.server.interruptions == 2 and loaded.server.comments == {"card": 77}
    store.save(loaded)
    rewritten = json.loads(client.get(job_key(job.id)))
    assert "extra" not in rewritten and rewritten["server"]["installation_id"] == 11
