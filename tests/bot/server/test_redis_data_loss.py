"""Redis losing its data (FLUSHALL on a real redis-server under a real `stepwise serve` and a
real `stepwise worker`, the fake GitHub): the worker notices the missing data marker within a
heartbeat, registers again (the metric and `--check` count it without a restart) and rebuilds
every job GitHub shows: a job at a milestone gate comes back at its gate and completes once
approved; a job at its plan gate, which never pushed anything, cannot be rebuilt and its issue
says what to do (relabel)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import httpx
import pytest
import redis
from rq import Worker

from bot.plumbing.queue import queue
from bot.plumbing.redis_store import RedisStore
from bot.server.recovery import LOST_MARKER
from jobs.kernel.model import Gate, JobStatus
from tests.kit.chaos.settings import SHORT
from tests.kit.github import FakeGitHub
from tests.kit.maintainer import approve, label, maintained_repo, wait_job
from tests.kit.redis_server import running_redis
from tests.kit.stepwise_procs import STEPWISE, app_env, stepwise_serve, stepwise_worker, stop

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(360)]
RELABEL = "Remove the `stepwise` label and add it again to start the job over"


def workers_metric(web: str) -> int:
    text = httpx.get(f"{web}/metrics", timeout=10).text
    return sum(int(float(m[1])) for m in
               re.finditer(r'^stepwise_workers\{state="[a-z]+"\} (\S+)$', text, re.MULTILINE))


def test_a_redis_that_lost_its_data_is_rebuilt_from_github(tmp_path: Path) -> None:
    with running_redis() as url, FakeGitHub(root=tmp_path / "github") as gh:
        env = app_env(url, tmp_path / "work", gh, **SHORT)
        connection = redis.Redis.from_url(url)
        store = RedisStore(connection)
        log = tmp_path / "worker.log"
        milestones = maintained_repo(gh, "milestones", files=4, batches_per_milestone=2)
        planned = maintained_repo(gh, "planned", files=4, require_plan_approval=True)
        with stepwise_serve(env, tmp_path / "web.log") as web:
            worker = stepwise_worker(env, log)
            try:
                label(web, milestones)
                label(web, planned)
                at_milestone = wait_job(store, milestones, lambda j: j.gate is not None and
                                        j.gate.kind is Gate.MILESTONE, "milestone gate", log)
                wait_job(store, planned, lambda j: j.gate is not None and
                         j.gate.kind is Gate.PLAN, "plan gate", log)
                pull = at_milestone.server.pull
                assert pull is not None

                connection.flushall()  # Redis lost everything

                rebuilt = wait_job(store, milestones, lambda j: j.gate is not None and
                                   j.gate.kind is Gate.MILESTONE, "rebuilt at its gate", log)
                assert rebuilt.id == at_milestone.id and rebuilt.server.rebuilt
                assert rebuilt.server.pull is not None and rebuilt.server.pull.number == pull.number
                told = [c.body for c in gh.comments_on(planned, 1) if LOST_MARKER in c.body]
                assert len(told) == 1 and RELABEL in told[0], told
                assert workers_metric(web) == 1
                assert len(Worker.all(queue=queue(connection))) == 1  # registered with RQ again
                check = subprocess.run([str(STEPWISE), "worker", "--check"], env=env,
                                       capture_output=True, text=True, timeout=60, check=False)
                assert check.returncode == 0, check.stderr

                approve(web, gh, milestones, rebuilt)  # commands work again
                wait_job(store, milestones, lambda j: j.status is JobStatus.COMPLETED,
                         "completed after the approve", log)
            finally:
                stop(worker)
        assert "Redis lost its data: registering the worker again" in log.read_text()
