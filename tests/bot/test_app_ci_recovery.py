"""The repository's CI through the App when things go wrong: a lost webhook recovered by the
reconciler, a check that never finishes, `retry` at the CI gate, no worker held while waiting,
and a worker killed between push and record (signed webhooks, real Redis, RQ workers and
githubkit against the loopback fake GitHub)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from pathlib import Path

import pytest

from bot.plumbing.keys import lease_key
from bot.plumbing.queue import queue
from bot.server import reaper
from bot.server.reconciler import reconcile
from jobs.features.ci.parts import CI_FAILED
from jobs.features.ci.record import AWAITING_CI
from jobs.features.ci.record import ci as ci_part
from jobs.kernel.model import BatchStatus, Gate, JobStatus
from tests.bot.ci_world import approved, ci_world, player, pull_number, waited_sha
from tests.bot.conftest import SECRET, World
from tests.kit.github_rate_limits import WORLD_WRITE_BURST
from tests.kit.local_e2e import STEPWISE
from tests.kit.waiting import ShiftedClock, wait_until

pytestmark = pytest.mark.slow
__all__ = ["ci_world"]  # the fixture



def test_a_missed_check_run_webhook_is_recovered_by_the_reconciler(ci_world: World) -> None:
    world, ci = ci_world, player(ci_world)
    world.ctx.clock = clock = ShiftedClock()
    job = approved(world)
    ci.report(waited_sha(job), "tests", "success", webhooks=False)  # GitHub never told the App
    world.work()
    assert ci_part(world.job()).wait is not None and world.queued() == 0
    reconcile(world.ctx)
    assert world.queued() == 0  # read just now: not due yet
    clock.advance(31)  # STEPWISE_CI_POLL_S=30
    reconcile(world.ctx)
    world.work()
    job = world.job()
    assert job.gate is not None and job.gate.kind is Gate.MILESTONE, (job.status, job.gate)


@pytest.mark.ci_config({"wait": "per_milestone", "timeout": 5})
def test_a_check_that_never_finishes_opens_the_ci_gate_at_the_timeout(ci_world: World) -> None:
    world, ci = ci_world, player(ci_world)
    world.ctx.clock = clock = ShiftedClock()
    job = approved(world)
    stuck = ci.actions_job(waited_sha(job), "tests")
    ci.start(stuck)
    world.work()
    assert ci_part(world.job()).wait is not None
    clock.advance(4 * 60)
    reconcile(world.ctx)
    world.work()
    assert ci_part(world.job()).wait is not None  # not yet
    clock.advance(61)
    reconcile(world.ctx)
    world.work()
    job = world.job()
    assert job.status is JobStatus.AWAITING_HUMAN and job.gate.kind == CI_FAILED
    assert "timed out" in job.gate.reason and "tests" in job.gate.reason


def test_a_waiting_job_holds_no_worker_and_the_reaper_leaves_it_alone(ci_world: World) -> None:
    """While it waits, no worker holds it: a worker that dies then loses nothing, the reaper
    does not call the job interrupted, and a new worker takes the webhook."""
    world, ci = ci_world, player(ci_world)
    world.ctx.settings = world.ctx.settings.model_copy(update={"lease_ttl_s": 1})
    world.ctx.clock = clock = ShiftedClock()
    job = approved(world)
    sha = waited_sha(job)
    clock.advance(5)
    assert reaper.reap(world.ctx) == []
    job = world.job()
    assert job.status is JobStatus.RUNNING and job.server.interruptions == 0
    ci.report(sha, "tests", "success")
    world.work()
    assert world.job().gate.kind is Gate.MILESTONE


def kill_worker(pid: int) -> None:
    """SIGKILL an RQ worker and its work horses: a horse runs in a process group of its own
    (RQ calls setpgrp in it), so killing the worker's group alone leaves the step running."""
    for entry in Path("/proc").iterdir():
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if entry.name.isdigit() and int(fields[1]) == pid:  # a child of the worker
            with contextlib.suppress(ProcessLookupError):
                os.killpg(int(entry.name), signal.SIGKILL)
    os.killpg(pid, signal.SIGKILL)


@pytest.mark.ci_config({"wait": "per_batch"})
def test_a_worker_killed_between_push_and_record_adopts_the_candidate_and_waits_for_its_checks(
        ci_world: World, tmp_path: Path, redis_url: str) -> None:
    """The worker dies after pushing batch 1 and before recording it (GitHub is slow to answer
    the checks it reads then): the next worker finds the commit by its trailers and, in
    per_batch mode, takes it as a candidate waiting for CI, never as completed."""
    world, ci = ci_world, player(ci_world)
    world.ctx.settings = world.ctx.settings.model_copy(update={"lease_ttl_s": 2})
    world.send("issues.labeled", issue_number=1, sender="maria")
    world.work()
    held = world.gh.hold("GET", r"/commits/[0-9a-f]{40}/check-runs$", query={"filter": "latest"})
    world.comment("/stepwise approve", by="maria")
    env = {**os.environ, "STEPWISE_APP_ID": str(world.gh.app_id),
           "STEPWISE_PRIVATE_KEY": world.gh.private_key_pem, "STEPWISE_WEBHOOK_SECRET": SECRET,
           "STEPWISE_REDIS_URL": redis_url, "STEPWISE_GITHUB_API_URL": world.gh.base_url,
           "STEPWISE_WORKDIR": str(tmp_path / "work"), "STEPWISE_LEASE_TTL_S": "2",
           "STEPWISE_GITHUB_WRITE_BURST": str(WORLD_WRITE_BURST)}
    worker = subprocess.Popen([str(STEPWISE), "worker", "--burst"], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True)
    try:
        assert held.hit.wait(timeout=90), "the worker never read the checks of its push"
        pushed = world.gh.branch_head(world.repo, "stepwise/issue-1")
        assert pushed is not None and pushed != world.job().base_sha  # pushed...
        assert world.job().batch(1).commit is None  # ...and not recorded
        kill_worker(worker.pid)
        worker.wait()
    finally:
        held.release.set()
        if worker.poll() is None:
            kill_worker(worker.pid)
    job_id = world.job().id
    wait_until(lambda: not world.redis.exists(lease_key(job_id)), timeout=10,
               what="the killed worker's lease to expire")
    world.ctx.clock = clock = ShiftedClock()
    clock.advance(2.1)
    queue(world.redis).empty()
    assert reaper.reap(world.ctx) == [job_id]
    world.work()
    job = world.job()
    assert waited_sha(job) == pushed and job.batch(1).commit == pushed
    assert job.batch(1).status == AWAITING_CI  # a candidate, not completed
    assert sum("batch 1/" in s for s in world.gh.git_log(world.repo, job.branch)) == 1
    ci.report(pushed, "tests", "success")
    world.work()
    job = world.job()
    assert job.batch(1).status is BatchStatus.COMPLETED
    assert sum("batch 1/" in s for s in world.gh.git_log(world.repo, job.branch)) == 1


def test_retry_at_the_ci_gate_re_runs_the_failed_checks_and_a_green_re_run_goes_on(
        ci_world: World) -> None:
    world, ci = ci_world, player(ci_world)
    job = approved(world)
    sha = waited_sha(job)
    ci.report(sha, "tests", "failure", log="flaky\n")
    world.work()
    job = world.job()
    assert job.gate is not None and job.gate.kind == CI_FAILED
    world.comment("/stepwise retry", by="maria", on=pull_number(world, job))
    world.work()
    job = world.job()
    assert waited_sha(job) == sha and job.gate is None
    # With actions: write (app.yml), Actions re-runs the run's failed jobs; no suite is asked.
    assert [r.status for r in world.gh.requests_to("POST", r"/rerun-failed-jobs$")] == [201]
    assert not world.gh.requests_to("POST", r"/rerequest$")
    assert [p.run.name for p in ci.rerun_requested("success")] == ["tests"]
    world.work()
    job = world.job()
    assert job.gate is not None and job.gate.kind is Gate.MILESTONE, (job.status, job.gate)

