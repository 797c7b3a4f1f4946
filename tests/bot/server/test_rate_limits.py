"""GitHub's rate limits as GitHub documents them: a step that meets one never waits in the worker
and never ends at a failure gate; the job records until when it waits ("waiting for GitHub's rate
limit until HH:MM" on the card, in `status` and the task center) and its next step is scheduled
for then: a primary limit's `x-ratelimit-reset`, a secondary limit's `Retry-After`, or at least
a minute, doubling, where GitHub does not say. No test here sleeps: the scheduled time is read."""

from __future__ import annotations

import time
from pathlib import Path

from rq.registry import ScheduledJobRegistry

from bot.plumbing.queue import queue
from bot.server import steps
from jobs.engine import usecases
from jobs.kernel.model import Gate, JobStatus
from jobs.notes.progress import render_card
from tests.bot.conftest import REPO, World, open_world
from tests.bot.server.test_reliability import FAST, REPO_READ, approved


def scheduled_delay(world: World) -> float:
    """Seconds from now until the one scheduled step; the step is then taken off the schedule."""
    registry = ScheduledJobRegistry(queue=queue(world.redis))
    (scheduled,) = registry.get_job_ids()
    delay = registry.get_scheduled_time(scheduled).timestamp() - time.time()
    registry.remove(scheduled)
    return delay


def waits_for(world: World) -> float:
    job = world.job()
    assert job.status is JobStatus.RUNNING and job.gate is None
    until = job.server.rate_limited_until
    assert until is not None
    line = f"Waiting for GitHub's rate limit until {until:%H:%M} UTC"
    assert line in render_card(job) and line in usecases.status(job).message
    return until.timestamp() - world.ctx.clock().timestamp()


def limit_over(world: World) -> None:
    """The time the scheduler waited has passed: GitHub's limit on the installation is over
    (bot/github/limited.py keeps it until then, for every worker)."""
    keys = world.redis.keys("stepwise:github-limited:*")
    if keys:
        world.redis.delete(*keys)


def test_a_secondary_limit_without_retry_after_waits_a_minute_then_longer(
        tmp_path: Path, redis_url: str) -> None:
    with open_world(tmp_path, redis_url, call_backoff_s=FAST) as world:
        approved(world)
        world.gh.fail_secondary_rate_limit("GET", REPO_READ, retry_after=None)
        reads = len(world.gh.requests_to("GET", REPO_READ))
        started = time.monotonic()
        world.work()
        assert time.monotonic() - started < 30  # the worker did not sit out the minute
        assert len(world.gh.requests_to("GET", REPO_READ)) == reads + 1  # not retried in place
        assert 50 < waits_for(world) <= 61 and 50 < scheduled_delay(world) <= 61
        sent = len(world.gh.requests)
        steps.step_task(world.ctx, {"job_id": world.job().id})  # too early: nothing is sent
        assert len([r for r in world.gh.requests[sent:]
                    if not r.path.endswith("/access_tokens")]) == 0
        assert 50 < waits_for(world) <= 61 and 50 < scheduled_delay(world) <= 61
        limit_over(world)
        world.gh.fail_secondary_rate_limit("GET", REPO_READ, retry_after=None)
        steps.step_task(world.ctx, {"job_id": world.job().id})  # what the scheduler runs then
        assert 110 < waits_for(world) <= 121 and 110 < scheduled_delay(world) <= 121  # growing
        limit_over(world)
        steps.step_task(world.ctx, {"job_id": world.job().id})
        world.work()
        job = world.job()
        assert job.gate is not None and job.gate.kind is Gate.MILESTONE
        assert job.server.rate_limited_until is None and job.server.rate_limit_waits == 0
        assert "rate limit" not in render_card(job)


def test_a_secondary_limit_with_retry_after_and_a_primary_limit_wait_as_github_says(
        tmp_path: Path, redis_url: str) -> None:
    with open_world(tmp_path, redis_url, call_backoff_s=FAST) as world:
        approved(world)
        world.gh.fail_secondary_rate_limit("GET", REPO_READ, retry_after=300)
        world.work()
        assert 290 < waits_for(world) <= 301 and 290 < scheduled_delay(world) <= 301
        limit_over(world)
        world.gh.fail_primary_rate_limit("GET", REPO_READ, reset_in=1800)
        steps.step_task(world.ctx, {"job_id": world.job().id})
        assert 1785 < waits_for(world) <= 1803 and 1785 < scheduled_delay(world) <= 1803
        assert world.job().server.transient_failures == 0  # a limit is not a fault to count
        limit_over(world)
        steps.step_task(world.ctx, {"job_id": world.job().id})
        world.work()
        job = world.job()
        assert job.gate is not None and job.gate.kind is Gate.MILESTONE
        assert not [r for r in world.gh.requests if r.status == 403 and r.path != f"/repos/{REPO}"]
