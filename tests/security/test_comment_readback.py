"""Commands are what the webhook delivered, once: the reconciler's read-back of comments whose
webhook never came applies only bodies unchanged since they were written, in their author's
name, and covers every comment since the last one it went past (not only since the gate
opened). Through signed webhooks, the worker, Redis and the fake GitHub."""

from __future__ import annotations

import time

from bot.server.reconciler import reconcile
from jobs.kernel.model import Gate, JobStatus
from tests.bot.conftest import REPO, World


def test_an_edited_plain_comment_is_never_applied_as_its_authors_command(world: World) -> None:
    world.send("issues.labeled", issue_number=1, sender="maria")
    world.work()
    before = world.job()
    assert before.gate is not None and before.gate.kind is Gate.PLAN
    time.sleep(1.01)
    said = world.gh.add_comment(REPO, 1, "Looks good to me, but let's wait for Tom.", user="maria")
    time.sleep(1.01)  # GitHub's timestamps have one-second resolution
    said.body, said.updated_at = "/stepwise approve", world.gh.clock()  # edited by someone else
    assert reconcile(world.ctx, comment_grace_s=0).commands == []
    world.work()
    after = world.job()
    assert after.approved_digest is None and after.gate is not None
    assert after.gate.id == before.gate.id and after.status is JobStatus.AWAITING_HUMAN


def test_a_cancel_posted_while_the_job_ran_is_read_back_when_it_waits(world: World) -> None:
    world.send("issues.labeled", issue_number=1, sender="maria")
    world.work(max_jobs=1)  # the label: the job exists, its first step is queued
    assert world.ctx.store.find(REPO, 1) is not None
    time.sleep(1.01)
    world.gh.add_comment(REPO, 1, "/stepwise cancel", user="maria")  # its webhook was lost
    time.sleep(1.01)
    world.work()  # the job runs on and opens its plan gate after the comment
    job = world.job()
    assert job.gate is not None and job.status is JobStatus.AWAITING_HUMAN
    assert reconcile(world.ctx, comment_grace_s=0).commands  # read back though it predates the gate
    world.work()
    assert world.job().status is JobStatus.CANCELLED
    assert reconcile(world.ctx, comment_grace_s=0).commands == []  # once: the cursor moved on
