"""The repository's CI as a verifier, end to end through the App: signed webhooks over real HTTP
(the CI player reports checks as GitHub Actions would, queued -> in progress -> completed),
a real Redis and RQ worker, the real githubkit client against the loopback fake GitHub, real git
pushes. Issue 17's stories: green and red milestones, per-batch withdrawal, a human push on a
candidate, a lost webhook, a check that never finishes, the `Stepwise` check run's states, and
no worker held while waiting."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.server import steps
from bot.server.keys import lease_key
from bot.server.reconciler import reconcile
from bot.server.worker import queue
from jobs.domain.model import BatchStatus, Gate, Job, JobStatus
from tests.bot.conftest import REPO, SECRET, World, open_world
from tests.kit.github_ci import CiPlayer
from tests.kit.github_ci_model import CheckRun
from tests.kit.github_permissions import named_permissions
from tests.kit.local_e2e import BROKEN_MODULE, STEPWISE, config_text, sample_files
from tests.kit.waiting import ShiftedClock, wait_until

pytestmark = pytest.mark.slow

FAILING_LOG = "".join(f"2026-12-01T12:00:00.0000000Z step {n}\n" for n in range(150)) + (
    f"2026-12-01T12:00:01.0000000Z FAILED tests/test_calc.py::test_total - AssertionError\n"
    f"2026-12-01T12:00:01.0000000Z {BROKEN_MODULE}:3: AssertionError\n")


@pytest.fixture
def ci_world(request: pytest.FixtureRequest, tmp_path: Path, redis_url: str) -> Iterator[World]:
    """The sample (3 batches, 2 per milestone) with `ci` from the test's `ci_config` marker."""
    marker = request.node.get_closest_marker("ci_config")
    ci: dict[str, Any] = dict(marker.args[0]) if marker else {"wait": "per_milestone"}
    files = sample_files(config=config_text(ci=ci))
    with open_world(tmp_path, redis_url, files=files, ci_poll_s=30) as opened:
        yield opened


def player(world: World) -> CiPlayer:
    return CiPlayer(world.gh, world.repo, deliver_to=world.url, secret=SECRET)


def approved(world: World) -> Job:
    world.send("issues.labeled", issue_number=1, sender="maria")
    world.work()
    world.comment("/stepwise approve", by="maria")
    world.work()
    return world.job()


def waited_sha(job: Job) -> str:
    assert job.ci_wait is not None, f"the job does not wait for CI ({job.status}, {job.gate})"
    return job.ci_wait.sha


def job_check(world: World, sha: str) -> CheckRun:
    runs = [r for r in world.gh.repos[REPO].ci.runs_on(sha) if r.name == "Stepwise"]
    assert len(runs) == 1, [(r.name, r.external_id) for r in runs]  # one run per commit, ever
    return runs[0]


def pull_number(world: World, job: Job) -> int:
    pull = world.gh.pull_for(world.repo, job.branch)
    assert pull is not None
    return pull.number


def test_a_green_per_milestone_job_and_its_check_run_states(ci_world: World) -> None:
    world, ci = ci_world, player(ci_world)
    job = approved(world)
    # Milestone 1 is pushed: the job waits for CI holding no worker, and says so.
    sha = waited_sha(job)
    assert job.status is JobStatus.RUNNING and job.gate is None and world.queued() == 0
    assert [b.status for b in job.batches[:2]] == [BatchStatus.COMPLETED] * 2
    pull = world.gh.pull_for(world.repo, job.branch)
    assert pull is not None and "waiting for CI" in (pull.body or "")
    assert job_check(world, sha).status == "in_progress"
    batch_runs = {r.name: r for r in world.gh.repos[REPO].ci.runs.values() if "batch" in r.name}
    assert set(batch_runs) == {"Stepwise / batch 1", "Stepwise / batch 2"}
    assert all(r.conclusion == "success" and "python -m unittest" in (r.summary or "")
               for r in batch_runs.values())

    # CI goes queued -> in progress (still waiting) -> green: the milestone gate opens.
    tests = ci.actions_job(sha, "tests")
    ci.start(tests)
    world.work()
    assert waited_sha(world.job()) == sha and "0 of 1" in (world.job().ci_wait.progress or "")
    ci.finish(tests, "success")
    world.work()
    job = world.job()
    assert job.status is JobStatus.AWAITING_HUMAN and job.gate.kind is Gate.MILESTONE
    assert job.ci_wait is None
    head_check = job_check(world, job.head_sha)
    assert (head_check.status, head_check.conclusion) == ("completed", "action_required")
    assert "/stepwise approve" in (head_check.summary or "")
    shown = "\n".join(world.bodies(pull_number(world, job)))
    assert "tests" in shown and f"/runs/{tests.run.id}" in shown  # the report links the check

    # The last milestone: CI again on its head, then the job completes and its check succeeds.
    world.comment("/stepwise approve", by="maria", on=pull_number(world, job))
    world.work()
    ci.report(waited_sha(world.job()), "tests", "success")
    world.work()
    job = world.job()
    assert job.status is JobStatus.COMPLETED, (job.status, job.gate)
    done = job_check(world, job.head_sha)
    assert (done.status, done.conclusion) == ("completed", "success")
    note = world.gh.read_file(world.repo, job.note_path, ref=job.branch) or ""
    assert "tests" in note and "CI" in note


def test_a_red_milestone_names_the_batch_then_revert_makes_it_green(ci_world: World) -> None:
    world, ci = ci_world, player(ci_world)
    job = approved(world)
    sha = waited_sha(job)
    ci.report(sha, "lint", "success")
    red = ci.report(sha, "tests", "failure", annotations=[(BROKEN_MODULE, 3, "assert total() == 6")],
                    log=FAILING_LOG)
    world.work()
    job = world.job()
    assert job.status is JobStatus.AWAITING_HUMAN and job.gate.kind is Gate.CI_FAILED
    guilty = next(b.number for b in job.batches if BROKEN_MODULE in b.files)
    pull = pull_number(world, job)
    gate = [b for b in world.bodies(pull) if "Waiting at gate `ci_failed`" in b]
    assert gate, world.bodies(pull)
    text = gate[-1]
    assert "`tests`" in text and f"{BROKEN_MODULE}:3" in text and "assert total() == 6" in text
    assert "FAILED tests/test_calc.py::test_total" in text  # the job's log tail
    assert f"files of batch {guilty} (`revert {guilty}`" in text
    assert f"/runs/{red.run.id}" in text
    assert job_check(world, job.head_sha).conclusion == "action_required"

    world.comment(f"/stepwise revert {guilty}", by="maria", on=pull)
    world.work()
    job = world.job()
    new_sha = waited_sha(job)
    assert new_sha != sha and world.gh.branch_head(world.repo, job.branch) == new_sha
    assert job.batch(guilty).status is BatchStatus.REVERTED
    ci.report(new_sha, "lint", "success")
    ci.report(new_sha, "tests", "success")
    world.work()
    job = world.job()
    assert job.gate is not None and job.gate.kind is Gate.MILESTONE, (job.status, job.gate)
    world.comment("/stepwise approve", by="maria", on=pull)
    world.work()
    last = waited_sha(world.job())
    ci.report(last, "lint", "success")
    ci.report(last, "tests", "success")
    world.work()
    assert world.job().status is JobStatus.COMPLETED
    # What app.yml asks for the CI was used, and nothing was refused.
    used = named_permissions([r.accepted_permissions for r in world.gh.requests])
    assert {"checks", "statuses", "actions"} <= used, used
    assert not [r for r in world.gh.requests if r.status == 403]


@pytest.mark.ci_config({"wait": "per_batch"})
def test_per_batch_a_red_check_withdraws_the_candidate_and_the_second_attempt_is_green(
        ci_world: World) -> None:
    world, ci = ci_world, player(ci_world)
    job = approved(world)
    candidate = waited_sha(job)
    base = job.base_sha
    assert job.batch(1).status is BatchStatus.AWAITING_CI
    assert world.gh.branch_head(world.repo, job.branch) == candidate
    ci.report(candidate, "tests", "failure", annotations=[("calc/alpha/sums.py", 1, "boom")])
    world.work()
    job = world.job()
    first = job.batch(1).attempts[0]
    assert first.outcome == "ci_failed" and first.error is not None and "tests" in first.error.message
    assert any(e.kind == "withdraw" and candidate[:7] in e.message for e in job.events)
    # The one rewrite: the branch went back to the candidate's parent (the base), and the
    # second attempt sits on it: the red commit is not under it.
    assert job.batch(1).status is BatchStatus.AWAITING_CI and len(job.batch(1).attempts) == 2
    second = waited_sha(job)
    history = [c.sha for c in world.gh.commits(world.repo, job.branch)]
    assert history[0] == second and history[1] == base
    assert second == candidate or candidate not in history
    ci.report(second, "tests", "success")
    world.work()
    job = world.job()
    assert job.batch(1).status is BatchStatus.COMPLETED
    assert job.batch(2).status is BatchStatus.AWAITING_CI


@pytest.mark.ci_config({"wait": "per_batch"})
def test_a_human_push_on_top_of_a_candidate_is_never_rewritten(ci_world: World) -> None:
    world, ci = ci_world, player(ci_world)
    job = approved(world)
    candidate = waited_sha(job)
    human = world.gh.push_files(world.repo, job.branch, {"NOTES.md": "mine\n"}, "a human's commit")
    ci.report(candidate, "tests", "failure")
    world.work()
    job = world.job()
    assert job.status is JobStatus.AWAITING_HUMAN and job.gate.kind is Gate.HUMAN_COMMIT
    assert world.gh.branch_head(world.repo, job.branch) == human  # no rewrite
    assert world.gh.git_log(world.repo, job.branch)[0] == "a human's commit"


def test_a_missed_check_run_webhook_is_recovered_by_the_reconciler(ci_world: World) -> None:
    world, ci = ci_world, player(ci_world)
    world.ctx.clock = clock = ShiftedClock()
    job = approved(world)
    ci.report(waited_sha(job), "tests", "success", webhooks=False)  # GitHub never told the App
    world.work()
    assert world.job().ci_wait is not None and world.queued() == 0
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
    assert world.job().ci_wait is not None
    clock.advance(4 * 60)
    reconcile(world.ctx)
    world.work()
    assert world.job().ci_wait is not None  # not yet
    clock.advance(61)
    reconcile(world.ctx)
    world.work()
    job = world.job()
    assert job.status is JobStatus.AWAITING_HUMAN and job.gate.kind is Gate.CI_FAILED
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
    assert steps.reap(world.ctx) == []
    job = world.job()
    assert job.status is JobStatus.RUNNING and job.extra.get("interruptions", 0) == 0
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
           "STEPWISE_WORKDIR": str(tmp_path / "work"), "STEPWISE_LEASE_TTL_S": "2"}
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
    assert steps.reap(world.ctx) == [job_id]
    world.work()
    job = world.job()
    assert waited_sha(job) == pushed and job.batch(1).commit == pushed
    assert job.batch(1).status is BatchStatus.AWAITING_CI  # a candidate, not completed
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
    assert job.gate is not None and job.gate.kind is Gate.CI_FAILED
    world.comment("/stepwise retry", by="maria", on=pull_number(world, job))
    world.work()
    job = world.job()
    assert waited_sha(job) == sha and job.gate is None
    # With actions: read, GitHub refuses re-running the jobs; the check suite is re-requested.
    assert [r.status for r in world.gh.requests_to("POST", r"/rerun-failed-jobs$")] == [403]
    assert any(e.endswith("check-suite-rerequested:github-actions") for e in world.gh.effects)
    assert [p.run.name for p in ci.rerun_requested("success")] == ["tests"]
    world.work()
    job = world.job()
    assert job.gate is not None and job.gate.kind is Gate.MILESTONE, (job.status, job.gate)
