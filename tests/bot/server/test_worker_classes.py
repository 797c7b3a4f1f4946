"""RQ's worker classes for `stepwise worker` (bot/server/worker.py): the default runs
each step in the worker itself, so what a step built stays built for the next (the installation
token and client); a forked work horse per step stays available; a wrong name is refused.
Real `stepwise worker` processes, real Redis, the fake GitHub."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import redis
from rq.worker import SimpleWorker, Worker

from bot.plumbing.redis_store import RedisStore
from bot.server.worker import worker_class
from jobs.basics.errors import BadInputError
from jobs.kernel.model import JobStatus
from tests.bot.conftest import SECRET, World, open_world
from tests.bot.server.test_reliability import approved
from tests.kit.github_rate_limits import WORLD_WRITE_BURST
from tests.kit.local_e2e import config_text, sample_files
from tests.kit.records import make_batch, make_job

STEPWISE = Path(sys.executable).parent / "stepwise"
TOKENS = r"^/app/installations/\d+/access_tokens$"


def test_worker_classes_are_named_as_rq_names_them() -> None:
    assert worker_class(None) is SimpleWorker and worker_class("") is SimpleWorker
    assert worker_class("rq.worker.Worker") is Worker
    for wrong in ("rq.worker.NoSuchWorker", "os.path", "json.dumps", "no_such_module.Worker"):
        with pytest.raises(BadInputError) as caught:
            worker_class(wrong)
        assert f"`{wrong}` is not an RQ worker class" in caught.value.message
        assert "rq.worker.SimpleWorker" in caught.value.hint


def test_a_wrong_worker_class_stops_the_worker_before_it_starts_with_the_fix() -> None:
    done = subprocess.run([str(STEPWISE), "worker", "--burst", "--worker-class", "rq.Nope"],
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "STEPWISE_REDIS_URL": "redis://127.0.0.1:9"})
    assert done.returncode == 2, done.stderr
    assert "`rq.Nope` is not an RQ worker class" in done.stderr
    assert "fix:" in done.stderr and "rq.worker.Worker" in done.stderr


def run_job_with(world: World, tmp_path: Path, redis_url: str, *extra: str) -> int:
    """Run the approved job's steps with `stepwise worker --burst`; the token mints it made."""
    env = {**os.environ, "STEPWISE_APP_ID": str(world.gh.app_id),
           "STEPWISE_PRIVATE_KEY": world.gh.private_key_pem, "STEPWISE_WEBHOOK_SECRET": SECRET,
           "STEPWISE_REDIS_URL": redis_url, "STEPWISE_GITHUB_API_URL": world.gh.base_url,
           "STEPWISE_WORKDIR": str(tmp_path / "work"),
           "STEPWISE_GITHUB_WRITE_BURST": str(WORLD_WRITE_BURST)}
    before = len(world.gh.requests_to("POST", TOKENS))
    subprocess.run([str(STEPWISE), "worker", "--burst", *extra], env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300,
                   start_new_session=True)
    job = world.job()
    assert job.status is JobStatus.COMPLETED, (job.status, job.gate)
    return len(world.gh.requests_to("POST", TOKENS)) - before


@pytest.mark.slow
@pytest.mark.parametrize(("extra", "steps_share_a_token"),
                         [((), True), (("--worker-class", "rq.worker.Worker"), False)],
                         ids=["default", "forked-horses"])
def test_steps_in_the_worker_share_the_installation_token_forked_horses_mint_their_own(
        tmp_path: Path, redis_url: str, extra: tuple[str, ...], steps_share_a_token: bool) -> None:
    files = sample_files(config=config_text(batches_per_milestone=5))
    with open_world(tmp_path, redis_url, files=files) as world:
        approved(world)
        mints = run_job_with(world, tmp_path, redis_url, *extra)
        steps = len(world.job().batches) + 1  # a step per batch, and the final review
        assert steps >= 3
        if steps_share_a_token:
            assert mints == 1
        else:
            assert mints >= steps


def test_the_store_remembers_a_bounded_number_of_jobs_and_a_forgotten_one_saves_whole(
        redis_url: str) -> None:
    """A worker that runs every step in one process touches many jobs: what the store keeps
    of them is bounded, and a job it forgot is written whole at its next save, still exact."""
    connection = redis.Redis.from_url(redis_url)
    connection.flushdb()
    store = RedisStore(connection, remembered_jobs=2)
    jobs = [make_job(number=n, batches=[make_batch(1), make_batch(2)]) for n in (1, 2, 3)]
    for job in jobs:
        job.repo = "octo/widgets"
        store.save(job)
    assert len(store._seen) == 2
    first = jobs[0]
    first.batch(2).summary = "changed while forgotten"
    store.save(first)
    loaded = RedisStore(connection).load_id(first.id)
    assert loaded is not None and loaded.model_dump(mode="json") == first.model_dump(mode="json")
    connection.flushdb()
    connection.close()
