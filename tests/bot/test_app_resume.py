"""A lifecycle that keeps work, through signed webhooks on the fake GitHub: closing the pull
request cancels the job, reopening it offers `/stepwise resume`, which carries the job on on the
same branch and pull request with its committed batch kept; the label added again resumes a
cancelled job the same way (no second branch or PR); a completed job is not resumed; and
`/stepwise retry-start` starts again after a start that failed, with the issue's new text."""

from __future__ import annotations

import pytest

from jobs.kernel.model import BatchStatus, Gate, JobStatus
from tests.bot.conftest import ISSUE_BODY, REPO, World
from tests.kit.local_e2e import config_text


def app_comments(world: World, number: int) -> list[str]:
    return [c.body for c in world.gh.comments_on(world.repo, number)
            if c.user == world.gh.bot_login]


def at_first_milestone(world: World) -> None:
    world.label_and_approve()
    assert world.job().gate.kind is Gate.MILESTONE


@pytest.mark.slow
def test_reopen_offers_resume_which_continues_on_the_same_branch_and_pull(world: World) -> None:
    at_first_milestone(world)
    job = world.job()
    pull = world.gh.pull_for(world.repo, job.branch)
    first_commit = job.batch(1).commit
    world.gh.close_issue(REPO, pull.number)
    world.send("pull_request.closed", pr_number=pull.number, head_ref=job.branch, merged=False,
               sender="maria")
    world.work()
    assert world.job().status is JobStatus.CANCELLED

    # Reopening only offers: the job stays cancelled until someone who may steer says so.
    world.send("pull_request.reopened", pr_number=pull.number, head_ref=job.branch,
               sender="maria")
    world.work()
    assert world.job().status is JobStatus.CANCELLED
    [offer] = [b for b in app_comments(world, pull.number) if "was reopened" in b]
    assert "`/stepwise resume`" in offer and f"`{job.branch}`" in offer
    assert "Completed batches kept so far: 1." in offer

    world.comment("/stepwise resume", by="rita", on=pull.number)  # read permission: refused
    world.work()
    assert world.job().status is JobStatus.CANCELLED
    world.comment("/stepwise resume", by="maria", on=pull.number)
    world.work()
    job = world.job()
    # Same record, branch and pull request (reopened); batch 1 kept, not redone.
    assert job.branch == "stepwise/issue-1" and job.status is JobStatus.AWAITING_HUMAN
    assert job.gate.kind is Gate.MILESTONE
    assert job.batch(1).status is BatchStatus.COMPLETED and job.batch(1).commit == first_commit
    again = world.gh.pull_for(world.repo, job.branch)
    assert again is not None and again.number == pull.number and again.state == "open"
    assert f"{REPO}#{pull.number}:pr-reopened" in world.gh.effects
    assert world.gh.branch_head(world.repo, "stepwise/issue-1-2") is None
    ours = [c for c in world.gh.commits(world.repo, job.branch)
            if f"Stepwise-Job: {job.id}" in c.message and "Stepwise-Batch: 1" in c.message]
    assert len(ours) == 1  # batch 1 was committed once, before and after the resume

    # A job that has not ended is not resumed.
    world.comment("/stepwise resume", by="maria", on=pull.number)
    world.work()
    assert any("not ended: there is nothing to resume" in b
               for b in app_comments(world, pull.number))


@pytest.mark.slow
def test_the_label_again_resumes_a_cancelled_job_and_a_completed_one_is_refused(
        world: World) -> None:
    at_first_milestone(world)
    job = world.job()
    world.comment("/stepwise cancel", by="maria", on=job.server.pull.number)
    world.work()
    assert world.job().status is JobStatus.CANCELLED
    world.send("issues.labeled", issue_number=1, sender="maria")
    world.work()
    job = world.job()
    assert job.status is JobStatus.AWAITING_HUMAN and job.gate.kind is Gate.MILESTONE
    assert job.branch == "stepwise/issue-1" and job.batch(1).status is BatchStatus.COMPLETED
    assert any("resumed (cancelled before) on `stepwise/issue-1`" in b
               for b in app_comments(world, 1))
    pulls = [p for p in world.repo.pulls.values()]
    assert len(pulls) == 1  # no second pull request

    # Carry on to the end: batch 2 is split, its broken file set aside as batch 4 fails at
    # the end and is skipped, the job completes.
    pull = job.server.pull.number
    world.comment("/stepwise approve", by="maria", on=pull)
    world.work()
    world.comment("/stepwise approve", by="maria", on=pull)
    world.work()
    assert world.job().gate.batch == 4
    world.comment("/stepwise skip needs a manual fix", by="maria", on=pull)
    world.work()
    assert world.job().status is JobStatus.COMPLETED
    world.comment("/stepwise resume", by="maria", on=pull)
    world.work()
    assert world.job().status is JobStatus.COMPLETED
    assert any("job #1 completed: there is nothing to resume" in b
               for b in app_comments(world, pull))


def test_retry_start_starts_again_with_the_issues_new_text(world: World) -> None:
    number = world.gh.add_issue(REPO, "Replace old_sum() with new_sum()", "No spec block here.",
                                user="maria")
    world.send("issues.labeled", issue_number=number, sender="maria")
    world.work()
    [said] = app_comments(world, number)
    assert "comment `/stepwise retry-start`" in said
    assert world.ctx.store.find(REPO, number) is None

    world.comment("/stepwise retry-start", by="tom", on=number)  # triage: may not start
    world.work()
    assert world.ctx.store.find(REPO, number) is None
    assert any("Stepwise did not start" in b for b in app_comments(world, number))

    world.gh.issue(world.repo, number).body = ISSUE_BODY  # the maintainer fixes the issue
    world.comment("/stepwise retry-start", by="maria", on=number)
    world.work()
    job = world.job(number)
    assert job.gate.kind is Gate.PLAN and job.server.started_by == "maria"
    assert any(f"Plan for #{number}" in b for b in app_comments(world, number))


def test_retry_start_at_the_plan_gate_plans_again_with_the_current_config(world: World) -> None:
    world.send("issues.labeled", issue_number=1, sender="maria")
    world.work()
    job = world.job()
    assert job.gate.kind is Gate.PLAN and job.config.batch_size != 1
    first_gate = job.gate.id
    world.gh.push_files(REPO, "main", {".github/stepwise.yml": config_text(batch_size=1)},
                        "smaller batches")
    world.comment("/stepwise retry-start", by="maria")
    world.work()
    job = world.job()
    assert job.config.batch_size == 1 and job.gate.kind is Gate.PLAN
    assert job.gate.id != first_gate and job.branch == "stepwise/issue-1"
    assert any("config reloaded" in b for b in app_comments(world, 1))
