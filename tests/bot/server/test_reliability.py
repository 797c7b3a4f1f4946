"""Reliability: the reaper, a worker killed mid-step, transient and permanent faults (leases
themselves: tests/bot/plumbing/test_leases.py)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from rq.registry import ScheduledJobRegistry

from bot.plumbing.keys import lease_key
from bot.plumbing.leases import Lease
from bot.plumbing.queue import queue
from bot.server import reaper, steps
from jobs.kernel.model import BatchStatus, Gate, JobStatus
from tests.bot.conftest import ISSUE_BODY, REPO, SECRET, World, open_world
from tests.kit.github_rate_limits import WORLD_WRITE_BURST
from tests.kit.local_e2e import config_text, sample_files
from tests.kit.waiting import ShiftedClock, process_running, wait_until

STEPWISE = Path(sys.executable).parent / "stepwise"


def approved(world: World) -> None:
    """Label and approve the plan, leaving the first step queued (nothing run yet)."""
    world.send("issues.labeled", issue_number=1, sender="maria")
    world.work()
    world.comment("/stepwise approve", by="maria")
    world.work(max_jobs=1)


# -- the reaper ----------------------------------------------------------------------------------

def test_the_reaper_leaves_leased_and_queued_jobs_alone(world: World) -> None:
    world.ctx.settings = world.ctx.settings.model_copy(update={"lease_ttl_s": 1})
    world.ctx.clock = clock = ShiftedClock()
    approved(world)  # status running, its next step queued
    clock.advance(1.1)  # the record is older than the lease TTL
    assert reaper.reap(world.ctx) == []
    queue(world.redis).empty()  # now nothing is queued for it...
    with Lease(world.redis, world.job().id, ttl_s=5):  # ...but a worker holds it
        assert reaper.reap(world.ctx) == []
    assert world.job().status is JobStatus.RUNNING


def test_the_reaper_requeues_an_abandoned_job_and_gates_after_three(world: World) -> None:
    world.ctx.settings = world.ctx.settings.model_copy(update={"lease_ttl_s": 1})
    world.ctx.clock = clock = ShiftedClock()
    approved(world)
    job_id = world.job().id
    for round_ in range(1, 5):
        queue(world.redis).empty()  # the queued step is lost with its worker
        clock.advance(1.1)  # the record is older than the lease TTL
        assert reaper.reap(world.ctx) == [job_id]
        job = world.job()
        assert job.server.interruptions == round_
        if round_ <= reaper.MAX_INTERRUPTIONS:
            assert job.status is JobStatus.INTERRUPTED and queue(world.redis).count == 1
    job = world.job()
    assert job.status is JobStatus.AWAITING_HUMAN and job.gate.kind is Gate.INTERRUPTED
    assert any("Waiting at gate `interrupted`" in b for b in world.bodies(1))
    world.comment("/stepwise approve", by="maria")
    world.work()
    assert world.job().batch(1).status is BatchStatus.COMPLETED


@pytest.mark.slow
def test_a_worker_killed_mid_validation_is_recovered_without_a_duplicate(
    tmp_path: Path, redis_url: str
) -> None:
    marker = f"slow-validation-{os.getpid()}"
    slow = f'python -c "import time; time.sleep(4)" {marker}'
    files = sample_files(config=config_text(
        batches_per_milestone=5,
        validate=[slow, "python -m unittest discover -s tests -q"]))
    with open_world(tmp_path, redis_url, files=files, lease_ttl_s=2) as world:
        approved(world)
        env = {**os.environ, "STEPWISE_APP_ID": str(world.gh.app_id),
               "STEPWISE_PRIVATE_KEY": world.gh.private_key_pem,
               "STEPWISE_WEBHOOK_SECRET": SECRET, "STEPWISE_REDIS_URL": redis_url,
               "STEPWISE_GITHUB_API_URL": world.gh.base_url,
               "STEPWISE_WORKDIR": str(tmp_path / "work"), "STEPWISE_LEASE_TTL_S": "2",
               "STEPWISE_GITHUB_WRITE_BURST": str(WORLD_WRITE_BURST)}
        worker = subprocess.Popen([str(STEPWISE), "worker", "--burst"], env=env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                  start_new_session=True)
        job_id = world.job().id
        wait_until(lambda: world.redis.exists(lease_key(job_id)), what="the worker's lease")
        wait_until(lambda: process_running(marker), what="the first batch's slow validation")
        os.killpg(worker.pid, signal.SIGKILL)
        worker.wait()
        assert world.job().status is JobStatus.RUNNING  # the record still says running
        wait_until(lambda: not world.redis.exists(lease_key(job_id)), timeout=10,
                   what="the killed worker's lease to expire")
        world.ctx.clock = clock = ShiftedClock()
        clock.advance(2.1)  # the record is older than the lease TTL
        queue(world.redis).empty()
        assert reaper.reap(world.ctx) == [job_id]
        world.work()
        job = world.job()
        assert job.status is JobStatus.COMPLETED, job.status
        log = world.gh.git_log(world.repo, job.branch)
        for number in range(1, len(job.batches) + 1):
            assert sum(f"batch {number}/" in s for s in log) == 1, log
        pull = world.gh.pull_for(world.repo, job.branch)
        resumed = [b for b in world.bodies(1) + world.bodies(pull.number)
                   if b.startswith("Resumed at batch")]
        assert resumed and "after an interruption" in resumed[0]


# -- faults ---------------------------------------------------------------------------------------

FAST = (0.01, 0.01, 0.01)  # call-level retry waits, shortened
REPO_READ = rf"^/repos/{REPO}$"  # every step reads the repository first


def test_a_transient_fault_outlasting_the_call_retries_backs_off_then_the_job_goes_on(
        tmp_path: Path, redis_url: str) -> None:
    with open_world(tmp_path, redis_url, call_backoff_s=FAST) as world:
        approved(world)
        world.gh.fail("GET", REPO_READ, 502, times=len(FAST) + 1)  # the call's every try
        world.work()
        job = world.job()
        assert job.server.transient_failures == 1 and job.status is JobStatus.RUNNING
        registry = ScheduledJobRegistry(queue=queue(world.redis))
        scheduled = registry.get_job_ids()
        assert len(scheduled) == 1
        delay = registry.get_scheduled_time(scheduled[0]).timestamp() - time.time()
        assert 3 < delay <= 5.5  # the first step backoff is 5 s
        registry.remove(scheduled[0])
        steps.step_task(world.ctx, {"job_id": job.id})  # what the scheduler runs 5 s later
        world.work()
        job = world.job()
        assert job.gate.kind is Gate.MILESTONE and job.server.transient_failures == 0
        assert world.gh.pull_for(world.repo, job.branch) is not None


def test_a_fault_that_persists_stops_at_the_failure_gate(tmp_path: Path, redis_url: str) -> None:
    with open_world(tmp_path, redis_url, call_backoff_s=FAST) as world:
        approved(world)
        world.gh.fail("GET", REPO_READ, 502, times=1000)
        world.work()
        job_id = world.job().id
        registry = ScheduledJobRegistry(queue=queue(world.redis))
        for _ in range(3):  # the three backed-off retries fail too
            for scheduled in registry.get_job_ids():
                registry.remove(scheduled)
            steps.step_task(world.ctx, {"job_id": job_id})
        job = world.job()
        assert job.status is JobStatus.AWAITING_HUMAN and job.gate.kind is Gate.FAILURE
        assert job.gate.report.code == "github_transient"
        assert job.gate.report.retry_class.value == "auto_retry"
        assert any("Waiting at gate `failure`" in b for b in world.bodies(1))
        assert job.gate.shown_at is not None and job.outbox == []


def test_a_vanished_repository_ends_the_job_as_failed(world: World) -> None:
    approved(world)
    world.gh.fail("GET", rf"/repos/{REPO}$", 404, times=10)
    world.work()
    job = world.job()
    assert job.status is JobStatus.FAILED
    assert job.error.code == "repository_gone" and job.error.retry_class.value == "do_not_retry"


# -- rebuild from GitHub ----------------------------------------------------------------------------

def test_a_lost_redis_record_is_rebuilt_from_github_without_redoing_batches(
    tmp_path: Path, redis_url: str
) -> None:
    files = sample_files(config=config_text(batches_per_milestone=1))
    with open_world(tmp_path, redis_url, files=files) as world:
        approved(world)
        world.work()
        before = world.job()
        assert before.gate.kind is Gate.MILESTONE and before.batch(1).commit
        pull = world.gh.pull_for(world.repo, before.branch)
        plan_comments = len([b for b in world.bodies(1) if "Plan for #1" in b])
        world.redis.flushdb()  # the whole Redis record is gone

        world.comment("/stepwise approve", by="maria", on=pull.number)
        world.work()  # rebuilt, re-planned, batch 1 adopted: back at milestone 1's gate
        assert any("rebuilt" in b for b in world.bodies(pull.number))
        assert world.job().gate.kind is Gate.MILESTONE
        world.comment("/stepwise approve", by="maria", on=pull.number)
        world.work()

        job = world.job()
        assert job.id == before.id and job.branch == before.branch
        assert job.batch(1).adopted and job.batch(1).commit == before.batch(1).commit
        assert job.batch(2).status is BatchStatus.COMPLETED
        log = world.gh.git_log(world.repo, job.branch)
        assert sum("batch 1/" in s for s in log) == 1
        assert len([b for b in world.bodies(1) if "Plan for #1" in b]) == plan_comments
        assert world.gh.pull_for(world.repo, job.branch).number == pull.number


# -- one running job per repository ---------------------------------------------------------------

def test_a_second_job_in_the_same_repository_waits_its_turn(tmp_path: Path, redis_url: str) -> None:
    files = sample_files(broken=True, config=config_text(require_plan_approval=False))
    with open_world(tmp_path, redis_url, files=files) as world:
        second = world.gh.add_issue(REPO, "The same again", ISSUE_BODY, user="maria")
        world.send("issues.labeled", issue_number=1, sender="maria")
        world.send("issues.labeled", issue_number=second, sender="maria")
        world.work(max_jobs=2)  # both labels handled: two queued jobs
        world.work(max_jobs=1)  # the first job takes the repository's slot and plans
        world.work(max_jobs=1)  # the second finds the slot taken
        waiting = world.job(second)
        assert waiting.status is JobStatus.QUEUED and waiting.server.queue_position == 1
        assert any("position 1 in the queue" in b for b in world.bodies(second))
        world.work()  # the first runs until it stops at a gate; then the second runs
        first, waiting = world.job(1), world.job(second)
        assert first.status is JobStatus.AWAITING_HUMAN
        assert waiting.batch(1).status is BatchStatus.COMPLETED
        assert waiting.server.queue_position is None
