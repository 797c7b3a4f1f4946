"""A command posted while a job's step runs, whose webhook is lost, is found by the reconciler's
read-back once that step is over, while the job still runs (not only when it next waits at a
gate), and applied once: the per-job cursor moves past it. Through signed webhooks, the RQ
worker running the real step, Redis and the fake GitHub (which holds a request of the step
while the comment is written)."""

from __future__ import annotations

import threading
import time

from bot.server.reconciler import reconcile
from jobs.kernel.model import Gate, JobStatus
from tests.bot.conftest import REPO, World


def test_a_cancel_written_mid_step_is_read_back_while_the_job_runs(world: World) -> None:
    world.send("issues.labeled", issue_number=1, sender="maria")
    world.work()
    assert world.job().gate.kind is Gate.PLAN
    world.comment("/stepwise approve", by="maria")
    world.work(max_jobs=1)  # the approval: the job runs, its first batch step is queued
    assert world.job().status is JobStatus.RUNNING and world.queued() == 1

    held = world.gh.hold("*", r"^/repos/")  # the step's first GitHub request waits here
    written: list[int] = []

    def comment_while_the_step_runs() -> None:
        assert held.hit.wait(60)
        time.sleep(1.01)  # GitHub's timestamps have one-second resolution
        written.append(world.gh.add_comment(REPO, 1, "/stepwise cancel", user="maria").id)
        held.release.set()  # no webhook: it was lost

    commenter = threading.Thread(target=comment_while_the_step_runs)
    commenter.start()
    try:
        world.work(max_jobs=1)  # the step, with the comment written in its middle
    finally:
        held.release.set()
        commenter.join(60)
    world.gh.holds.remove(held)
    during = world.job()
    assert written and during.status is JobStatus.RUNNING and during.gate is None
    assert any(b.commit for b in during.batches)  # the step did its work after all

    assert reconcile(world.ctx, comment_grace_s=0).commands == written  # while it still runs
    world.work()
    after = world.job()
    assert after.status is JobStatus.CANCELLED, (after.status, after.gate)
    assert not all(b.commit for b in after.batches)  # stopped before the rest was done
    assert reconcile(world.ctx, comment_grace_s=0).commands == []  # applied once
