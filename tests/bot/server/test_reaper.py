"""The reaper (bot/server/reaper.py) on a job whose worker died while a cancel was pending: the
job is not `interrupted` (that would forget the cancel), the reaper round does not fail, and the
job queued again ends `cancelled`."""

from __future__ import annotations

from bot.plumbing.queue import queue
from bot.server import reaper
from jobs.kernel.model import JobStatus
from tests.bot.conftest import World
from tests.kit.records import make_batch, make_job
from tests.kit.waiting import ShiftedClock


def test_a_cancel_requested_job_whose_worker_died_is_requeued_and_cancelled(world: World) -> None:
    world.ctx.settings = world.ctx.settings.model_copy(update={"lease_ttl_s": 1})
    world.ctx.clock = clock = ShiftedClock()
    world.send("issues.labeled", issue_number=1, sender="maria")
    world.work()
    world.comment("/stepwise approve", by="maria")
    world.work(max_jobs=1)  # running, its first step queued
    job = world.job()
    job.set_status(JobStatus.CANCEL_REQUESTED)  # a cancel arrived; the worker then died
    world.ctx.store.save(job)
    queue(world.redis).empty()  # the step is lost with its worker
    clock.advance(1.1)  # the record is older than the lease TTL
    assert reaper.reap(world.ctx) == [job.id]
    requeued = world.job()
    assert requeued.status is JobStatus.CANCEL_REQUESTED and requeued.server.interruptions == 1
    assert queue(world.redis).count == 1
    world.work()
    assert world.job().status is JobStatus.CANCELLED


def test_a_reaper_round_reads_only_active_jobs_however_many_ended(world: World) -> None:
    """Idle cost does not grow with history: a round's Redis commands are the same with 0 and
    with 300 ended jobs kept (it reads the index of active jobs, not every record)."""
    def commands_of_a_round() -> int:
        before = int(world.redis.info("stats")["total_commands_processed"])
        reaper.reap(world.ctx)
        return int(world.redis.info("stats")["total_commands_processed"]) - before - 1

    world.send("issues.labeled", issue_number=1, sender="maria")
    world.work()  # one job waiting at its plan gate
    reaper.reap(world.ctx)  # the index is built on the first round
    empty = commands_of_a_round()
    for number in range(300):
        ended = make_job(number=1000 + number, status=JobStatus.COMPLETED,
                         batches=[make_batch(1)])
        ended.repo = world.job().repo
        world.ctx.store.save(ended)
    assert commands_of_a_round() == empty
