"""A retry waiting in RQ's scheduler when the worker running the scheduler dies (issue 45's
Done-when): real redis-server, a real `stepwise serve` and real `stepwise worker` processes,
the fake GitHub. The step after the approval meets GitHub's 502s, so it backs off and its retry
waits in RQ's scheduled registry; the only worker (the scheduler's holder) is SIGKILLed then,
its scheduler lock lingering, and a new worker starts. The retry still runs, once (the new
worker's reaper queues a delayed task RQ's scheduler left overdue, bot/plumbing/queue.py): its
task starts once in all the workers' logs, batch 1 is committed once and the job goes on to its
next gate."""

from __future__ import annotations

import json
import os
import re
import signal
import time
from pathlib import Path

import pytest
import redis
from rq.registry import ScheduledJobRegistry

from bot.plumbing.queue import queue
from bot.plumbing.redis_store import RedisStore
from jobs.kernel.job import Job
from jobs.kernel.model import BatchStatus, Gate
from tests.kit.chaos.settings import SCHEDULER_LOCK, SHORT
from tests.kit.github import FakeGitHub
from tests.kit.github_git import git_text
from tests.kit.maintainer import approve, label, maintained_repo
from tests.kit.redis_server import running_redis
from tests.kit.stepwise_procs import app_env, stepwise_serve, stepwise_worker, stop

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(300)]
BACKOFF_S = 6  # long enough to kill the worker while the retry waits


def wait_for(what: str, ok: object, logs: list[Path], timeout: float = 120) -> object:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = ok()  # type: ignore[operator]
        if found:
            return found
        time.sleep(0.1)
    tails = "\n".join(log.read_text()[-3000:] for log in logs if log.exists())
    raise AssertionError(f"{what}\n{tails}")


def test_a_scheduled_retry_runs_once_after_the_scheduler_s_worker_is_killed(
        tmp_path: Path) -> None:
    with running_redis() as url, FakeGitHub(root=tmp_path / "github") as gh:
        env = app_env(url, tmp_path / "work", gh,
                      **{**SHORT, "STEPWISE_BACKOFF_S": json.dumps([BACKOFF_S] * 3)})
        connection = redis.Redis.from_url(url)
        store = RedisStore(connection)
        repo = maintained_repo(gh, "retried", require_plan_approval=True)
        first, second = tmp_path / "worker-1.log", tmp_path / "worker-2.log"
        logs = [first, second]

        def job() -> Job | None:
            return store.find(repo.full_name, 1)

        with stepwise_serve(env, tmp_path / "web.log") as web:
            worker = stepwise_worker(env, first)
            try:
                label(web, repo)
                planned = wait_for("the plan gate", lambda: (j := job()) is not None and
                                   j.gate is not None and j.gate.kind is Gate.PLAN and j, logs)
                assert isinstance(planned, Job) and planned.gate is not None
                # GitHub answers 502 to the step's first call (and to the call's own retries):
                # a transient fault, so the step backs off and its retry waits in RQ.
                gh.fail("GET", rf"^/repos/{repo.full_name}$", 502, times=20)
                approve(web, gh, repo, planned)
                registry = ScheduledJobRegistry(queue=queue(connection))  # type: ignore[no-untyped-call]

                def scheduled() -> str | None:
                    j = job()
                    if j is None or not j.server.retry_scheduled:
                        return None
                    ids = [i for i in registry.get_job_ids() if i.startswith(f"advance-{j.id}")]
                    return ids[0] if ids else None

                retry = wait_for("a retry waiting in RQ's scheduler", scheduled, logs)
                assert isinstance(retry, str)
                gh.failures.clear()  # GitHub is well again
                assert connection.get(SCHEDULER_LOCK)  # the worker runs RQ's scheduler
                os.killpg(worker.pid, signal.SIGKILL)  # the worker and its work horse
                worker.wait()
                assert retry in registry.get_job_ids()  # still waiting, its scheduler gone
                assert connection.get(SCHEDULER_LOCK)  # and its lock lingers
                worker = stepwise_worker(env, second)
                wait_for("batch 1 committed", lambda: (j := job()) is not None and
                         j.batch(1).status is BatchStatus.COMPLETED, logs)
                wait_for("the job at its next gate or ended", lambda: (j := job()) is not None
                         and (j.gate is not None or j.is_terminal), logs)
            finally:
                stop(worker)
        started = rf"perform\('advance'[^\n]*\({re.escape(retry)}\)"
        # The retry started once, after the kill, on the new worker.
        assert re.findall(started, first.read_text()) == []
        assert len(re.findall(started, second.read_text())) == 1, second.read_text()[-4000:]
        ended = job()
        assert ended is not None and ended.batch(1).status is BatchStatus.COMPLETED
        batches = git_text(repo.path, "log", "--format=%(trailers:key=Stepwise-Batch,valueonly)",
                           f"main..{ended.branch}").split()
        assert batches.count("1") == 1  # committed once
