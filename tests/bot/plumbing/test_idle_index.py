"""The sets the reconciler works from (bot/plumbing/idle_index.py), kept by every save of the real
Redis store: which jobs are in them, how they follow a job's status, the build for records saved
before the sets existed, and a pass that reads only the jobs it works on (real redis-server)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
import redis

from bot.plumbing import idle_index
from bot.plumbing.keys import idle_key
from bot.plumbing.redis_store import RedisStore
from bot.server.reconciler import MAX_JOBS_PER_PASS, reconcile
from jobs.features.ci.record import CiWait, ci
from jobs.kernel.job import Job, OpenGate
from jobs.kernel.model import Gate, JobStatus
from jobs.kernel.records import OutboxEntry
from tests.bot.conftest import REPO, World, open_world
from tests.kit.records import T0, make_job


def sets(client: redis.Redis) -> dict[str, set[str]]:
    return {kind: {m.decode() for m in client.smembers(idle_key(kind))}  # type: ignore[union-attr]
            for kind in idle_index.KINDS}


def at_gate(number: int, *, shown: bool = True, installation: int | None = 1) -> Job:
    job = make_job(number=number, status=JobStatus.AWAITING_HUMAN)
    job.repo = REPO
    job.server.installation_id = installation
    job.gate = OpenGate(id=f"plan-{number}", kind=Gate.PLAN, opened_at=T0, reason="ready",
                        shown_at=T0 if shown else None)
    return job


def owed(job: Job) -> Job:
    job.outbox = [OutboxEntry(key="card", kind="card", since=T0)]
    return job


def test_each_save_puts_a_job_in_the_sets_its_status_and_outbox_say(client: redis.Redis) -> None:
    store = RedisStore(client)
    gate, unshown = store.save(at_gate(1)), store.save(at_gate(2, shown=False))
    ended = make_job(number=3, status=JobStatus.COMPLETED)
    store.save(owed(ended))
    waiting_ci = make_job(number=4, status=JobStatus.RUNNING)
    ci(waiting_ci).wait = CiWait(sha="1" * 40, since=T0, scope="milestone", number=1)
    store.save(owed(waiting_ci))
    running = store.save(owed(make_job(number=5, status=JobStatus.RUNNING)))  # a step publishes
    assert sets(client) == {"owing": {unshown.id, ended.id, waiting_ci.id},
                            "gate": {gate.id, unshown.id}, "ci": {waiting_ci.id},
                            "active": {running.id}}  # its comments are read back, no more


def test_the_sets_follow_the_job_and_a_delete_empties_them(client: redis.Redis) -> None:
    store = RedisStore(client)
    job = store.save(owed(at_gate(1)))
    assert job.id in sets(client)["gate"] and job.id in sets(client)["owing"]
    job.outbox = []
    store.save(job)
    assert sets(client) == {"owing": set(), "gate": {job.id}, "ci": set(), "active": set()}
    job.gate, job.status = None, JobStatus.RUNNING  # answered: a worker holds it again
    store.save(job)
    assert sets(client) == {"owing": set(), "gate": set(), "ci": set(), "active": {job.id}}
    job.status = JobStatus.AWAITING_HUMAN
    store.save(owed(job))
    store.delete(job)
    assert sets(client) == {"owing": set(), "gate": set(), "ci": set(), "active": set()}


def test_records_saved_before_the_sets_existed_are_indexed_once(client: redis.Redis) -> None:
    store = RedisStore(client)
    gate, ended = store.save(at_gate(1)), store.save(owed(make_job(number=2,
                                                                   status=JobStatus.FAILED)))
    store.save(make_job(number=3, status=JobStatus.COMPLETED))
    client.delete(*(idle_key(kind) for kind in (*idle_index.KINDS, "indexed")))  # the old layout
    assert idle_index.members(client, "gate") == [gate.id]
    assert idle_index.members(client, "owing") == [ended.id]
    assert client.exists(idle_key("indexed"))
    client.srem(idle_key("gate"), gate.id)  # built once: members never rebuild by themselves
    assert idle_index.members(client, "gate") == []


@pytest.fixture
def world(tmp_path: Path, redis_url: str) -> Iterator[World]:
    with open_world(tmp_path, redis_url) as opened:
        yield opened


def test_a_pass_reads_only_the_jobs_it_works_on_and_forgets_stale_members(world: World) -> None:
    store = world.ctx.store
    # Ended jobs owe nothing: a pass never reads them; running ones have their comments read
    # back in turns, MAX_JOBS_PER_PASS a pass.
    for number in range(1, 301):
        store.save(make_job(number=number, status=JobStatus.COMPLETED if number % 2 else
                            JobStatus.RUNNING))
    waiting = [store.save(at_gate(number, installation=None)) for number in (401, 402, 403)]
    stale = store.save(make_job(number=404, status=JobStatus.RUNNING))
    world.redis.sadd(idle_key("gate"), stale.id)  # e.g. added by a build racing a save
    world.redis.sadd(idle_key("owing"), stale.id)
    result = reconcile(world.ctx, comment_grace_s=0)
    # the three waiting jobs and the stale one (in both sets), and one turn of running jobs
    assert result.scanned == 5 + MAX_JOBS_PER_PASS
    assert idle_index.members(world.redis, "gate") == sorted(job.id for job in waiting)
    assert idle_index.members(world.redis, "owing") == []


def test_an_unconfirmed_gate_is_published_from_the_owing_set_and_leaves_it(world: World) -> None:
    """However old the job and however many ended jobs are newer."""
    store = world.ctx.store
    oldest = at_gate(1, shown=False)  # a gate whose comment was never confirmed
    oldest.created_at = datetime(2020, 1, 1, tzinfo=UTC)
    store.save(oldest)
    for number in range(2, 40):
        store.save(make_job(number=number, status=JobStatus.COMPLETED))
    result = reconcile(world.ctx, comment_grace_s=0)
    assert result.published == [oldest.id]
    reloaded = store.load_id(oldest.id)
    assert reloaded is not None and reloaded.gate is not None and reloaded.gate.shown_at
    assert oldest.id not in idle_index.members(world.redis, "owing")
