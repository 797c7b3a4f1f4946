"""Waking jobs that wait for the repository's CI: the `ci:<repo>@<sha>` index kept by the Redis
store, signed CI webhooks through the app (real uvicorn, Redis, RQ worker, githubkit) waking
exactly the waiting job, and the reconciler polling waits whose webhook was lost."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from rq.registry import ScheduledJobRegistry

from bot.events import Event, Kind
from bot.plumbing.keys import ci_key
from bot.plumbing.leases import Lease
from bot.plumbing.queue import queue
from bot.server.ci_events import on_ci_event
from bot.server.reconciler import reconcile
from jobs.features.ci.record import CiWait, ci
from jobs.kernel.job import Job
from jobs.kernel.model import JobStatus
from tests.bot.conftest import REPO, SECRET, World, open_world
from tests.kit.github_ci import CiPlayer
from tests.kit.github_ci_model import AppRef
from tests.kit.records import make_job


@pytest.fixture
def world(tmp_path: Path, redis_url: str) -> Iterator[World]:
    with open_world(tmp_path, redis_url, ci_poll_s=60) as opened:
        yield opened


def head(world: World) -> str:
    sha = world.gh.branch_head(world.repo, "main")
    assert sha is not None
    return sha


def waiting_job(world: World, sha: str, number: int = 1, *, minutes_ago: int = 0,
                checked: bool = True) -> Job:
    job = make_job(number=number, status=JobStatus.RUNNING)
    job.repo = REPO
    job.server.installation_id = 1
    since = world.ctx.clock() - timedelta(minutes=minutes_ago)
    ci(job).wait = CiWait(sha=sha, since=since, scope="batch", number=1,
                         checked_at=since if checked else None)
    world.ctx.store.save(job)
    return job


def queued_advances(world: World) -> list[str]:
    return sorted(str(task.args[1]["job_id"]) for task in queue(world.redis).get_jobs()
                  if task.args and task.args[0] == "advance")


def player(world: World) -> CiPlayer:
    return CiPlayer(world.gh, world.repo, deliver_to=world.url, secret=SECRET)


def run_events(world: World) -> None:
    """Run the queued webhook tasks only (not the steps they queue)."""
    for task in queue(world.redis).get_jobs():
        if task.args and task.args[0] != "event":
            continue
        world.work(max_jobs=1)


def test_the_store_keeps_the_index_in_step_with_ci_wait(world: World) -> None:
    first, second = "1" * 40, "2" * 40
    job = waiting_job(world, first)
    members = world.redis.smembers
    assert members(ci_key(REPO, first)) == {job.id.encode()}
    assert ci(job).wait is not None
    ci(job).wait = ci(job).wait.model_copy(update={"sha": second})
    world.ctx.store.save(job)
    assert members(ci_key(REPO, first)) == set() and members(ci_key(REPO, second)) == {job.id.encode()}
    ci(job).wait = ci(job).wait.model_copy(update={"progress": "waiting for CI: 1 of 2 checks done"})
    world.ctx.store.save(job)  # same sha: the index is left as it is
    assert members(ci_key(REPO, second)) == {job.id.encode()}
    ci(job).wait = None
    world.ctx.store.save(job)
    assert members(ci_key(REPO, second)) == set()


@pytest.mark.parametrize("how", ["check_run", "status", "other_app"])
def test_a_ci_webhook_wakes_exactly_the_job_waiting_on_that_commit(world: World, how: str) -> None:
    sha = head(world)
    waiting = waiting_job(world, sha, 1)
    elsewhere = waiting_job(world, "3" * 40, 2)
    ci = player(world)
    if how == "check_run":
        ci.report(sha, "tests", "success")
    elif how == "status":
        ci.status(sha, "ci/lint", "success")
    else:
        ci.app_check(sha, "coverage", "failure")
    assert ci.delivered and {status for _, status in ci.delivered} == {202}
    run_events(world)
    assert queued_advances(world) == [waiting.id]
    assert elsewhere.id not in queued_advances(world)


def test_a_delivery_for_a_commit_nobody_waits_on_is_answered_without_a_task(world: World) -> None:
    waiting_job(world, "3" * 40)
    ci = player(world)
    ci.report(head(world), "tests", "failure")
    assert {status for _, status in ci.delivered} == {202}
    assert world.queued() == 0  # the web app's one Redis read said no job waits on it


def test_stepwise_s_own_check_runs_wake_nothing(world: World) -> None:
    sha = head(world)
    waiting_job(world, sha)
    own = AppRef(world.gh.app_id, "stepwise", "Stepwise")
    ci = player(world)
    ci.app_check(sha, "Stepwise / batch 1", "success", app=own)
    assert ci.delivered == [("check_run", 202)] and world.queued() == 0  # the web app drops it
    # A worker given one anyway (an older web app queued it) wakes nothing either.
    event = Event(kind=Kind.CI, delivery_id="d-own", repo=REPO, installation_id=1, sha=sha,
                  check_name="Stepwise", check_app="other-name", check_app_id=world.gh.app_id)
    assert on_ci_event(world.ctx, event) == []
    assert queued_advances(world) == []


def test_a_job_that_stopped_waiting_is_not_woken(world: World) -> None:
    sha = head(world)
    job = waiting_job(world, sha)
    world.redis.sadd(ci_key(REPO, sha), "job-gone")  # an index entry without a job
    job.status = JobStatus.AWAITING_HUMAN
    world.ctx.store.save(job)  # still has ci_wait in the record, but is at a gate
    player(world).report(sha, "tests", "success")
    run_events(world)
    assert queued_advances(world) == []


def test_the_reconciler_queues_a_step_for_waits_not_read_for_ci_poll_s(world: World) -> None:
    stale = waiting_job(world, "4" * 40, 1, minutes_ago=5)
    fresh = waiting_job(world, "5" * 40, 2)
    never_read = waiting_job(world, "6" * 40, 3, minutes_ago=2, checked=False)
    not_waiting = make_job(number=4, status=JobStatus.RUNNING)
    not_waiting.repo = REPO
    world.ctx.store.save(not_waiting)
    reconcile(world.ctx)
    assert queued_advances(world) == sorted([stale.id, never_read.id])
    assert fresh.id not in queued_advances(world)
    reconcile(world.ctx)  # the same step is not queued twice
    assert queued_advances(world) == sorted([stale.id, never_read.id])


def test_a_missed_webhook_is_recovered_by_the_reconciler_poll(world: World) -> None:
    sha = head(world)
    job = waiting_job(world, sha, minutes_ago=2)
    player(world).report(sha, "tests", "success", webhooks=False)  # GitHub never told the App
    assert world.queued() == 0
    reconcile(world.ctx)
    assert queued_advances(world) == [job.id]


def test_a_webhook_that_comes_mid_step_wakes_the_job_after_the_step(world: World) -> None:
    sha = head(world)
    job = waiting_job(world, sha)
    event = Event(kind=Kind.CI, delivery_id="d-mid", repo=REPO, installation_id=1, sha=sha,
                  check_name="tests", check_app="github-actions")
    with Lease(world.redis, job.id):  # the step that began the wait is still running
        assert on_ci_event(world.ctx, event) == [job.id]
    assert queued_advances(world) == []  # not now: it would find the lease taken
    scheduled = ScheduledJobRegistry(queue=queue(world.redis)).get_job_ids()
    assert [task for task in scheduled if job.id.replace(":", "-") in task] != []
