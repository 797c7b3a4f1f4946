"""Steering a job from GitHub comments: who may, cancel at each stage, revert, refusals."""

from __future__ import annotations

from rq.job import Job

from bot.plumbing.keys import event_task_id
from jobs.kernel.model import BatchStatus, Gate, JobStatus
from tests.bot.conftest import REPO, World


def start(world: World) -> None:
    world.send("issues.labeled", issue_number=1, sender="maria")
    world.work()


def test_triage_users_label_starts_nothing_and_is_answered(world: World) -> None:
    world.send("issues.labeled", issue_number=1, sender="tom")
    world.work()
    assert world.ctx.store.find(REPO, 1) is None
    assert any("did not start" in b and "@tom" in b for b in world.bodies(1))


def test_a_second_label_on_a_live_job_gets_a_reply_and_no_second_job(world: World) -> None:
    start(world)
    first = world.job()
    world.send("issues.labeled", issue_number=1, sender="maria")
    world.work()
    assert world.job().id == first.id
    assert any("already" in b for b in world.bodies(1))


def test_an_invalid_spec_is_answered_naming_the_field(world: World) -> None:
    number = world.gh.add_issue(REPO, "Bad spec", "```stepwise\nrecipe: replace\npaths: []\n```\n",
                                user="maria")
    world.send("issues.labeled", issue_number=number, sender="maria")
    world.work()
    assert world.ctx.store.find(REPO, number) is None
    assert any("`paths`" in b for b in world.bodies(number))


def test_cancel_on_a_queued_job_cancels_it_at_once(world: World) -> None:
    world.send("issues.labeled", issue_number=1, sender="maria")
    world.work(max_jobs=1)  # the label is handled; the first step is still queued
    assert world.job().status is JobStatus.QUEUED
    world.comment("/stepwise cancel", by="maria", delivery_id="cancel-delivery")
    # A second worker takes the comment while the job's first step still waits in the queue.
    Job.fetch(event_task_id("cancel-delivery"), connection=world.redis).perform()
    assert world.job().status is JobStatus.CANCELLED
    world.work()
    job = world.job()
    assert job.status is JobStatus.CANCELLED
    assert world.gh.branch_head(world.repo, job.branch) is None  # nothing was pushed


def test_cancel_on_a_running_job_stops_at_the_next_safe_point(world: World) -> None:
    world.gh.set_permission(REPO, "maria", "admin")
    start(world)
    world.comment("/stepwise approve", by="maria")
    world.work(max_jobs=2)  # the comment, then batch 1; batch 2 is still to come
    job = world.job()
    assert job.status is JobStatus.RUNNING and job.batch(1).status is BatchStatus.COMPLETED
    world.comment("/stepwise cancel", by="maria", delivery_id="cancel-running")
    Job.fetch(event_task_id("cancel-running"), connection=world.redis).perform()
    assert world.job().status is JobStatus.CANCEL_REQUESTED  # the next step will stop
    world.work()
    job = world.job()
    assert job.status is JobStatus.CANCELLED
    assert all(b.status is not BatchStatus.COMPLETED for b in job.batches[1:])
    log = world.gh.git_log(world.repo, job.branch)
    assert sum("batch" in s and "/3 —" in s for s in log) == 1
    note = world.gh.read_file(world.repo, job.note_path, ref=job.branch)
    assert "## Cancelled" in note


def test_revert_adds_a_revert_commit_on_the_remote_branch(world: World) -> None:
    start(world)
    world.comment("/stepwise approve", by="maria")
    world.work()
    job = world.job()
    assert job.gate.kind is Gate.MILESTONE
    pull = world.gh.pull_for(world.repo, job.branch)
    world.comment("/stepwise revert 1", by="maria", on=pull.number)
    world.work()
    job = world.job()
    assert job.batch(1).status is BatchStatus.REVERTED
    head = world.gh.commits(world.repo, job.branch)[0]
    assert world.gh.branch_head(world.repo, job.branch) == job.head_sha
    messages = world.gh.git_log(world.repo, job.branch)
    assert any(m.startswith("stepwise(#1): revert batch 1") for m in messages), messages
    assert head is not None


def test_unknown_verbs_and_bad_arguments_are_answered(world: World) -> None:
    start(world)
    world.comment("/stepwise aprove\n/stepwise revert x", by="maria")
    world.work()
    reply = [b for b in world.bodies(1) if "Unknown command" in b]
    assert reply and "Did you mean `approve`?" in reply[0] and "| command | effect |" in reply[0]
    assert "revert" in reply[0]
    assert world.job().gate.kind is Gate.PLAN  # nothing changed


def test_a_comment_is_applied_once_even_if_delivered_twice(world: World) -> None:
    start(world)
    posted = world.gh.add_comment(world.repo, 1, "/stepwise instruct keep names", user="maria")
    for _ in range(2):  # two deliveries of the same comment (e.g. the reconciler and a webhook)
        world.send("issue_comment.created", issue_number=1, comment_id=posted.id,
                   comment_body=posted.body, comment_user="maria", sender="maria")
    world.work()
    assert world.job().instructions == ["keep names"]
