"""Retention of ended jobs (STEPWISE_RETAIN_ENDED_DAYS, default 90, 0 keeps them forever): the
reconciler's pass removes jobs that ended longer ago, with every key that belongs to them and
nothing else, and then the task center, the API and `status --server` say the job ended and was
pruned, instead of a 404 or a 500. Against a real Redis, with the worker running the pass."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import redis
from fastapi.testclient import TestClient

from bot.plumbing import pruned as pruned_marks
from bot.plumbing.keys import (
    JOBS,
    RETENTION_ROUND,
    batches_key,
    comments_read_key,
    events_key,
    idle_key,
    issue_key,
    job_key,
    pruned_issue_key,
    pruned_key,
    pull_key,
    seen_key,
    slots_key,
    waiting_key,
)
from bot.plumbing.queue import queue
from bot.plumbing.redis_store import RedisStore
from bot.server import retention
from bot.server.context import ServerContext
from bot.server.handlers import handlers
from bot.server.rebuild import rebuild
from bot.server.reconciler import reconcile_round
from bot.server.worker import install_handlers
from bot.settings import Settings
from bot.taskcenter.terminal import server_status
from bot.web.app import create_app
from jobs.adapters.sandbox import make_sandbox
from jobs.basics.errors import BadInputError
from jobs.kernel.job import Job, OpenGate
from jobs.kernel.model import BatchStatus, Gate, JobStatus
from jobs.kernel.records import Event, OutboxEntry, PullRequest
from tests.bot.conftest import open_world
from tests.kit.burst_worker import BurstWorker
from tests.kit.github_auth import shared_app_key
from tests.kit.records import make_batch, make_job
from tests.kit.redis_server import free_port

REPO = "octo/widgets"
NOW = datetime.now(UTC).replace(microsecond=0)
TOKEN = "retention-dashboard-t0ken-Zq8#kV2!pX7"


def ended_job(number: int, status: JobStatus, *, ended_days: float, created_days: float,
              pull: int | None = None, suffix: str = "") -> Job:
    job = make_job(number=number, status=status,
                   batches=[make_batch(1, status=BatchStatus.COMPLETED), make_batch(2)])
    job.repo, job.id = REPO, f"{number}-job{suffix}"
    job.created_at = NOW - timedelta(days=created_days)
    job.updated_at = NOW - timedelta(days=ended_days)
    job.server.installation_id = 5
    job.events = [Event(at=job.created_at, kind="created", message="job created")]
    if pull is not None:
        job.server.pull = PullRequest(number=pull, url=f"https://github.com/{REPO}/pull/{pull}",
                                      node_id="PR_1")
    return job


def seed(client: redis.Redis) -> dict[str, Job]:
    """Jobs ended at various ages, one still at a gate, one owing GitHub, one issue re-run."""
    store = RedisStore(client)
    jobs = {
        "old": ended_job(1, JobStatus.COMPLETED, ended_days=100, created_days=101, pull=11),
        "just_over": ended_job(2, JobStatus.CANCELLED, ended_days=90.1, created_days=95),
        "recent": ended_job(3, JobStatus.FAILED, ended_days=30, created_days=120),
        "waiting": ended_job(4, JobStatus.AWAITING_HUMAN, ended_days=150, created_days=200),
        "owing": ended_job(5, JobStatus.COMPLETED, ended_days=100, created_days=100),
        "replaced": ended_job(6, JobStatus.COMPLETED, ended_days=100, created_days=101,
                              suffix="a"),
    }
    jobs["waiting"].gate = OpenGate(kind=Gate.MILESTONE, id="milestone-1", reason="m1 done",
                                    opened_at=jobs["waiting"].updated_at,
                                    shown_at=jobs["waiting"].updated_at)
    jobs["owing"].outbox = [OutboxEntry(key="summary", kind="summary", since=NOW)]
    for job in jobs.values():
        store.save(job)
    newer = ended_job(6, JobStatus.RUNNING, ended_days=0, created_days=1, suffix="b")
    store.save(newer)  # issue 6 was labelled again: its issue key names the new job
    client.set(pull_key(REPO, 11), jobs["old"].id)
    client.set(seen_key(jobs["old"].id), "{}")
    client.set(comments_read_key(jobs["old"].id), NOW.isoformat())
    client.zadd(slots_key(REPO), {jobs["old"].id: 1, newer.id: 2})
    client.zadd(waiting_key(REPO), {jobs["just_over"].id: 1, jobs["recent"].id: 2})
    client.zadd(slots_key("installation:5"), {jobs["old"].id: 1})
    return jobs


def keys(client: redis.Redis) -> set[str]:
    return {k.decode() for k in client.keys("*")}


def owned(job: Job) -> set[str]:
    return {job_key(job.id), batches_key(job.id), events_key(job.id)}


def test_a_pass_removes_the_jobs_ended_longer_ago_with_every_key_of_theirs_and_nothing_else(
        client: redis.Redis) -> None:
    jobs = seed(client)
    old, just_over, replaced = jobs["old"], jobs["just_over"], jobs["replaced"]
    before = keys(client)
    removed = (owned(old) | owned(just_over) | owned(replaced) | {
        issue_key(REPO, 1), issue_key(REPO, 2), pull_key(REPO, 11), seen_key(old.id),
        comments_read_key(old.id), slots_key("installation:5")})
    assert removed <= before  # every key the pass should remove was there
    pruned = retention.prune_ended(client, retain_days=90, now=NOW)
    assert sorted(pruned) == sorted([old.id, just_over.id, replaced.id])
    markers = {pruned_key(old.id), pruned_key(just_over.id), pruned_key(replaced.id),
               pruned_issue_key(REPO, 1), pruned_issue_key(REPO, 2)}
    assert keys(client) == (before - removed) | markers
    kept = {m.decode() for m in client.zrange(JOBS, 0, -1)}
    assert kept == {jobs["recent"].id, jobs["waiting"].id, jobs["owing"].id, "6-jobb"}
    assert {m.decode() for m in client.zrange(slots_key(REPO), 0, -1)} == {"6-jobb"}
    assert {m.decode() for m in client.zrange(waiting_key(REPO), 0, -1)} == {jobs["recent"].id}
    assert client.get(issue_key(REPO, 6)) == b"6-jobb"  # the issue's newer job keeps its key
    assert client.smembers(idle_key("gate")) == {jobs["waiting"].id.encode()}
    assert client.smembers(idle_key("owing")) == {jobs["owing"].id.encode()}
    assert 364 * 86400 < client.ttl(pruned_key(old.id)) <= 365 * 86400
    gone = pruned_marks.pruned(client, old.id)
    assert gone is not None and gone.message() == (
        f"Job {old.id} ({REPO}#1) ended (completed) on {old.updated_at:%Y-%m-%d} and was pruned "
        "after 90 days (STEPWISE_RETAIN_ENDED_DAYS): its record is no longer kept")
    assert retention.prune_ended(client, retain_days=90, now=NOW) == []  # nothing more is due
    assert RedisStore(client).load_id(jobs["recent"].id) is not None


def test_zero_keeps_ended_jobs_forever_and_passes_prune_once_per_interval(
        client: redis.Redis) -> None:
    jobs = seed(client)
    before = keys(client)
    assert retention.retention_round(client, retain_days=0, now=NOW) == []
    assert keys(client) == before
    first = retention.retention_round(client, retain_days=90, now=NOW)
    assert sorted(first) == sorted([jobs["old"].id, jobs["just_over"].id, jobs["replaced"].id])
    later = NOW + timedelta(days=61)  # the failed job ended 91 days before then
    assert retention.retention_round(client, retain_days=90, now=later) == []  # same interval
    client.delete(RETENTION_ROUND)  # as if EVERY_S had passed
    assert retention.retention_round(client, retain_days=90, now=later) == [jobs["recent"].id]


def settings(redis_url: str, tmp_path: Path, **overrides: Any) -> Settings:
    private_key, _ = shared_app_key()
    options: dict[str, Any] = {"app_id": 1, "private_key": private_key, "redis_url": redis_url,
                               "webhook_secret": "s3cret", "dashboard_token": TOKEN,
                               "github_api_url": f"http://127.0.0.1:{free_port()}",
                               "workdir": tmp_path / "work", **overrides}
    return Settings(**options)


def test_the_worker_prunes_and_the_task_center_api_and_status_say_so(
        client: redis.Redis, redis_url: str, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    jobs = seed(client)
    config = settings(redis_url, tmp_path, retain_ended_days=90)
    ctx = ServerContext.from_settings(config, connection=client,
                                      sandbox=make_sandbox(require_isolation=False))
    install_handlers(handlers(ctx))
    assert reconcile_round(ctx)  # as a worker's reaper thread queues the pass
    BurstWorker([queue(client)], connection=client).work(burst=True)
    old = jobs["old"]
    assert client.get(job_key(old.id)) is None and client.exists(pruned_key(old.id))
    said = "ended (completed) on"
    with TestClient(create_app(config, client), follow_redirects=False) as web:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        answer = web.get(f"/api/jobs/{old.id}", headers=headers)
        assert answer.status_code == 410 and said in answer.json()["detail"]
        assert "after 90 days" in answer.json()["detail"]
        assert web.get("/api/jobs/9-nothing", headers=headers).status_code == 404
        assert web.get(f"/api/jobs/{jobs['recent'].id}", headers=headers).status_code == 200
        assert web.post("/login", data={"token": TOKEN, "next": "/jobs"}).status_code == 303
        page = web.get(f"/jobs/{old.id}")
        assert page.status_code == 410 and "Job ended and pruned" in page.text
        assert "after 90 days" in page.text
    with pytest.raises(BadInputError) as raised:
        server_status(REPO, 1, url=redis_url)
    assert said in raised.value.message and "after 90 days" in raised.value.message
    assert raised.value.code == "job_pruned" and "still on GitHub" in raised.value.hint
    with pytest.raises(BadInputError) as missing:
        server_status(REPO, 99, url=redis_url)
    assert "no Stepwise job" in missing.value.message
    # A comment on the issue never rebuilds the pruned job from its branch as if its record had
    # been lost (nothing listens at the settings' GitHub: a call would raise, not return None).
    assert rebuild(ctx, repo=REPO, number=1, installation_id=5) is None


def test_a_command_on_the_issue_of_a_pruned_job_says_it_was_pruned(
        tmp_path: Path, redis_url: str) -> None:
    with open_world(tmp_path, redis_url) as world:
        job = ended_job(1, JobStatus.COMPLETED, ended_days=100, created_days=101)
        job.repo = world.repo.full_name
        world.ctx.store.save(job)
        assert retention.prune_ended(world.redis, retain_days=90, now=NOW) == [job.id]
        world.comment("/stepwise status", by="maria")
        world.work()
        replies = [b for b in world.bodies(1) if "> /stepwise status" in b]
        assert len(replies) == 1, world.bodies(1)
        reply = replies[0]
        assert f"Job {job.id} ({job.repo}#1) ended (completed)" in reply
        assert "pruned after 90 days" in reply and "no Stepwise job" not in reply
        assert world.ctx.store.find(job.repo, 1) is None  # not rebuilt from GitHub either
