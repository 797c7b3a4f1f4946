"""The step task's wire format (what RQ keeps in Redis for a queued step) stays what older
versions wrote: the function by its dotted path `bot.server.worker.perform`, the task name
`advance` and the id `advance-<job>-<version>`. A step queued by an older worker still runs
after an upgrade, and one queued now is the same task an older worker would run."""

from __future__ import annotations

from pathlib import Path

from rq import Queue

from bot.plumbing.keys import step_task_id
from bot.plumbing.queue import PERFORM, STEP_TASK, queue
from bot.server import worker
from jobs.kernel.model import Gate
from tests.bot.conftest import open_world


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
