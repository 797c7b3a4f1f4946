"""The repository's CI as a verifier, end to end through the App: signed webhooks over real HTTP
(the CI player reports checks as GitHub Actions would, queued -> in progress -> completed),
a real Redis and RQ worker, the real githubkit client against the loopback fake GitHub, real git
pushes. Issue 17's stories: green and red milestones with the `Stepwise` check run's states,
per-batch withdrawal, a human push on a candidate (recovery: test_app_ci_recovery.py)."""

from __future__ import annotations

from typing import Any

import pytest

from jobs.features.ci.parts import CI_FAILED
from jobs.features.ci.record import AWAITING_CI
from jobs.features.ci.record import ci as ci_part
from jobs.kernel.model import BatchStatus, Gate, JobStatus
from tests.bot.ci_world import (
    FAILING_LOG,
    approved,
    ci_world,
    job_check,
    player,
    pull_number,
    waited_sha,
)
from tests.bot.conftest import REPO, World
from tests.kit.github_permissions import named_permissions
from tests.kit.local_e2e import BROKEN_MODULE

pytestmark = pytest.mark.slow
__all__ = ["ci_world"]  # the fixture


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
    wait = ci_part(world.job()).wait
    assert waited_sha(world.job()) == sha and wait is not None and "0 of 1" in wait.progress
    ci.finish(tests, "success")
    world.work()
    job = world.job()
    assert job.status is JobStatus.AWAITING_HUMAN and job.gate.kind is Gate.MILESTONE
    assert ci_part(job).wait is None
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
    newest: dict[str, Any] = {}  # GitHub shows the newest run of a name on a commit
    for run in sorted(world.gh.repos[REPO].ci.runs.values(), key=lambda r: r.id):
        if run.name == "Stepwise" and run.head_sha != job.head_sha:
            newest[run.head_sha] = run
    assert newest and {(r.status, r.conclusion) for r in newest.values()} == {
        ("completed", "neutral")}  # superseded, none waiting forever on an old commit
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
    assert job.status is JobStatus.AWAITING_HUMAN and job.gate.kind == CI_FAILED
    guilty = next(b.number for b in job.batches if BROKEN_MODULE in b.files)
    pull = pull_number(world, job)
    gate = [b for b in world.bodies(pull) if "Waiting at gate `ci_failed`" in b]
    assert gate, world.bodies(pull)
    text = gate[-1]
    assert "`tests`" in text and f"{BROKEN_MODULE}:3" in text and "assert total() == 6" in text
    assert "FAILED tests/test_calc.py::test_total" in text  # the job's log tail
    assert f"files of batch {guilty} (`/stepwise revert {guilty}` undoes one)" in text, text
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
    assert job.batch(1).status == AWAITING_CI
    assert world.gh.branch_head(world.repo, job.branch) == candidate
    ci.report(candidate, "tests", "failure", annotations=[("calc/alpha/sums.py", 1, "boom")])
    world.work()
    job = world.job()
    first = job.batch(1).attempts[0]
    assert first.outcome == "ci_failed" and first.error is not None and "tests" in first.error.message
    assert any(e.kind == "withdraw" and candidate[:7] in e.message for e in job.events)
    forced = [r.json for r in world.gh.requests_to("PATCH", rf"/git/refs/heads/{job.branch}$")
              if r.json.get("force")]  # through the Git Data API, not a force push
    assert forced == [{"sha": base, "force": True}]
    # The one rewrite: the branch went back to the candidate's parent (the base), and the
    # second attempt sits on it: the red commit is not under it.
    assert job.batch(1).status == AWAITING_CI and len(job.batch(1).attempts) == 2
    second = waited_sha(job)
    history = [c.sha for c in world.gh.commits(world.repo, job.branch)]
    assert history[0] == second and history[1] == base
    assert second == candidate or candidate not in history
    ci.report(second, "tests", "success")
    world.work()
    job = world.job()
    assert job.batch(1).status is BatchStatus.COMPLETED
    assert job.batch(2).status == AWAITING_CI


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
