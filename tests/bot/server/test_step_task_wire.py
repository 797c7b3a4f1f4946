"""The step task's wire format (what RQ keeps in Redis for a queued step) stays what older
versions wrote: the entry point `bot.server.worker.perform` (0.1 workers import it; newer ones
resolve it, and every former name, through their table), the task name
`advance` and the id `advance-<job>-<version>`. A step queued by an older worker still runs
after an upgrade, and one queued now is the same task an older worker would run."""

from __future__ import annotations

from pathlib import Path

import pytest
import redis
from rq import Queue
from rq.registry import FailedJobRegistry

from bot.plumbing.keys import step_task_id
from bot.plumbing.queue import ENTRY_POINTS, PERFORM, STEP_TASK, queue
from bot.server import worker
from jobs.kernel.model import Gate
from tests.bot.conftest import open_world
from tests.kit.burst_worker import BurstWorker


def test_the_function_rq_stores_is_the_workers_perform() -> None:
    module, _, name = PERFORM.rpartition(".")
    assert (module, name) == (worker.__name__, worker.perform.__name__)
    assert STEP_TASK == "advance"


def test_a_step_queued_by_an_older_version_runs_after_the_upgrade(tmp_path: Path,
                                                                 redis_url: str) -> None:
    with open_world(tmp_path, redis_url) as world:
        world.send("issues.labeled", issue_number=1, sender="maria")
        world.work(max_jobs=1)  # the label's event task only: it queues the first step
        job = world.job()
        [queued] = queue(world.redis).get_jobs()
        assert queued.func_name == "bot.server.worker.perform"
        assert queued.args[0] == "advance" and queued.args[1]["job_id"] == job.id
        assert queued.id == step_task_id(job.id, str(job.version)) == \
            f"advance-{job.id}-{job.version}"
        queue(world.redis).empty()
        # what a worker of the previous release queued: the same call, written by hand
        Queue("stepwise", connection=world.redis).enqueue(
            "bot.server.worker.perform", "advance", {"job_id": job.id},
            job_id=f"advance-{job.id}-{job.version}")
        world.work()
        assert world.job().gate is not None and world.job().gate.kind is Gate.PLAN


@pytest.mark.parametrize("entry_point", ENTRY_POINTS)
def test_every_entry_point_name_a_release_queued_runs_on_this_worker(
        tmp_path: Path, redis_url: str, entry_point: str) -> None:
    """Names are resolved through the worker's table, not imported: `jobs.worker.perform` (what
    releases before the move to bot/server queued) no longer exists as code, yet still runs."""
    with open_world(tmp_path, redis_url) as world:
        world.send("issues.labeled", issue_number=1, sender="maria")
        world.work(max_jobs=1)
        job = world.job()
        queue(world.redis).empty()
        Queue("stepwise", connection=world.redis).enqueue(
            entry_point, "advance", {"job_id": job.id}, job_id=f"advance-{job.id}-{job.version}")
        BurstWorker([queue(world.redis)], connection=world.redis,
                    job_class=worker.StableJob).work(burst=True)
        assert FailedJobRegistry(queue=queue(world.redis)).count == 0
        assert world.job().gate is not None and world.job().gate.kind is Gate.PLAN


def test_a_worker_started_by_run_worker_resolves_entry_points(redis_url: str) -> None:
    """`stepwise worker`'s loop gives RQ the stable job class, so a former name runs there."""
    connection = redis.Redis.from_url(redis_url)
    ran: list[dict[str, object]] = []
    worker.install_handlers({"probe": ran.append})
    Queue("stepwise", connection=connection).enqueue("jobs.worker.perform", "probe", {"n": 1})
    assert worker.run_worker(lambda: redis.Redis.from_url(redis_url), burst=True,
                             worker_class=BurstWorker)
    assert ran == [{"n": 1}]
