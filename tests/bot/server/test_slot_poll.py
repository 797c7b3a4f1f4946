"""A job waiting in line for its repository's slot keeps a poll queued however long it waits,
even when its position does not change (bot/server/steps.py `schedule_slot_poll`): the poll
once used the running step's own task id and was dropped, and the reaper then interrupted the
waiting job until it gated (issue 19's full-size fair share run). Real Redis, RQ, fake GitHub."""

from __future__ import annotations

from pathlib import Path

from rq.job import Job as RQJob
from rq.registry import ScheduledJobRegistry

from bot.plumbing.queue import queue
from bot.server import reaper
from jobs.kernel.model import JobStatus
from tests.bot.conftest import ISSUE_BODY, REPO, World, open_world
from tests.kit.local_e2e import config_text, sample_files
from tests.kit.waiting import ShiftedClock


def polls_of(world: World, job_id: str) -> list[str]:
    registry = ScheduledJobRegistry(queue=queue(world.redis))  # type: ignore[no-untyped-call]
    return [task for task in registry.get_job_ids() if job_id in task]


def run_poll_now(world: World, task_id: str) -> None:
    """Run a scheduled poll at once, ahead of the queue (RQ's scheduler would in 10 s)."""
    registry = ScheduledJobRegistry(queue=queue(world.redis))  # type: ignore[no-untyped-call]
    registry.remove(task_id)
    queue(world.redis).enqueue_job(RQJob.fetch(task_id, connection=world.redis), at_front=True)
    world.work(max_jobs=1)


def test_a_job_waiting_in_line_at_the_same_position_keeps_its_poll(tmp_path: Path,
                                                                    redis_url: str) -> None:
    files = sample_files(broken=True, config=config_text(require_plan_approval=False))
    with open_world(tmp_path, redis_url, files=files) as world:
        second = world.gh.add_issue(REPO, "The same again", ISSUE_BODY, user="maria")
        world.send("issues.labeled", issue_number=1, sender="maria")
        world.send("issues.labeled", issue_number=second, sender="maria")
        world.work(max_jobs=2)  # both labels handled: two queued jobs
        world.work(max_jobs=1)  # the first job takes the repository's slot
        world.work(max_jobs=1)  # the second finds it taken: position 1, a poll scheduled
        waiting = world.job(second)
        assert waiting.server.queue_position == 1
        for _ in range(3):  # each poll finds the slot still taken, at the same position
            (poll,) = polls_of(world, waiting.id)
            run_poll_now(world, poll)
            assert world.job(second).server.queue_position == 1
            assert len(polls_of(world, waiting.id)) == 1, "the waiting job lost its poll"
        world.ctx.clock = clock = ShiftedClock()
        clock.advance(world.ctx.settings.lease_ttl_s + 1)  # its record is older than a lease
        assert waiting.id not in reaper.reap(world.ctx)  # a scheduled poll: not abandoned
        assert world.job(second).status is JobStatus.QUEUED
