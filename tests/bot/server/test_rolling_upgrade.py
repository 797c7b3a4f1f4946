"""A rolling upgrade from the previous release (0.1.0, commit PREVIOUS_RELEASE) with work in
flight, in both directions, as docs/operating.md "Upgrading" tells it: real redis-server, real
`stepwise serve` and `stepwise worker` processes of both versions (the old one from `git
archive` of its commit, run through PYTHONPATH), the fake GitHub.

1. Old web app and old worker: a job reaches its plan gate; the worker stops; the maintainer's
   `approve` is queued by the old web app while no worker runs.
2. New web app and new worker: the new worker runs the task the old version queued (the job
   completes); a second job reaches its plan gate; the worker stops; its `approve` is queued by
   the new web app.
3. Only the old worker again (a rollback, or an old worker still running mid-rollout): it takes
   the task the new version queued, and since the job's record was written by the newer
   release (fields the old one does not know), it leaves the record exactly as it was.
4. The new worker again: the second job completes from that record.

No task fails in phases 1 and 2, and no worker logs "Invalid attribute name" nor "no handler".
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from rq.registry import FailedJobRegistry

from bot.observability.version import running_version
from bot.plumbing.keys import reconcile_task_id
from bot.plumbing.queue import queue
from bot.plumbing.redis_store import RedisStore
from jobs.kernel.job import Job
from jobs.kernel.model import Gate, JobStatus
from tests.kit.chaos.settings import SHORT
from tests.kit.github import FakeGitHub
from tests.kit.github_model import FakeRepo
from tests.kit.maintainer import approve, label, maintained_repo
from tests.kit.previous_release import OLD_STEPWISE, previous_release_tree
from tests.kit.redis_server import running_redis
from tests.kit.stepwise_procs import app_env, stepwise_serve, stepwise_worker, stop

SETTLE_S = 120.0

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(420)]


@pytest.fixture(scope="module")
def previous_release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The previous release's source tree (its `bot/` and `jobs/`)."""
    return previous_release_tree(tmp_path_factory.mktemp("previous-release"))


def old_env(env: dict[str, str], tree: Path) -> dict[str, str]:
    return {**env, "PYTHONPATH": str(tree)}


def wait_for(store: RedisStore, repo: FakeRepo, *, gate: Gate | None = None,
             status: JobStatus | None = None, logs: list[Path]) -> Job:
    deadline = time.monotonic() + SETTLE_S
    job = None
    while time.monotonic() < deadline:
        job = store.find(repo.full_name, 1)
        if job is not None and (
                (gate is not None and job.gate is not None and job.gate.kind is gate)
                or (status is not None and job.status is status)):
            return job
        time.sleep(0.2)
    tails = "\n".join(f"--- {log.name}\n" + "\n".join(
        line[-700:] for line in log.read_text().splitlines()
        if "label-" in line or "approve-" in line or '"error"' in line or "Traceback" in line)
        for log in logs if log.exists())
    raise AssertionError(f"job of {repo.full_name}: {job and job.status}@"
                         f"{job and job.gate and job.gate.kind}, wanted {gate or status}\n{tails}")


def waiting_tasks(connection: redis.Redis) -> list[str]:
    """The tasks waiting in the queue, by id without the delivery's comment id; not a
    reconciler pass, which the stopped worker's reaper thread may have queued just before it
    stopped (`reconcile-round`, one per interval: whichever worker comes next runs it)."""
    return [re.sub(r"-\d+$", "", task) for task in queue(connection).job_ids
            if task != reconcile_task_id()]


@pytest.fixture
def installation(tmp_path: Path) -> Iterator[tuple[FakeGitHub, str, dict[str, str]]]:
    with running_redis() as url, FakeGitHub(root=tmp_path / "github") as gh:
        env = app_env(url, tmp_path / "work", gh, **SHORT)
        yield gh, url, env


def test_tasks_queued_by_either_version_run_on_the_other(
        tmp_path: Path, previous_release: Path,
        installation: tuple[FakeGitHub, str, dict[str, str]]) -> None:
    gh, url, env = installation
    connection = redis.Redis.from_url(url)
    store = RedisStore(connection)
    old = old_env(env, previous_release)
    logs = [tmp_path / n for n in ("old-web.log", "old-worker.log", "new-web.log",
                                   "new-worker.log")]
    first, second = [maintained_repo(gh, name, labels=(), require_plan_approval=True)
                     for name in ("first", "second")]

    # 1. The previous release runs; its approve waits in the queue with no worker running.
    with stepwise_serve(old, logs[0], command=OLD_STEPWISE, cwd=previous_release) as old_web:
        worker = stepwise_worker(old, logs[1], command=OLD_STEPWISE, cwd=previous_release)
        try:
            label(old_web, first)
            at_plan = wait_for(store, first, gate=Gate.PLAN, logs=logs)
        finally:
            stop(worker)
        approve(old_web, gh, first, at_plan)
    assert waiting_tasks(connection) == ["event-approve-first"]  # for the upgrade

    # 2. The new release: its worker runs the old task; a new task waits for the rollback.
    with stepwise_serve(env, logs[2]) as new_web:
        worker = stepwise_worker(env, logs[3])
        try:
            wait_for(store, first, status=JobStatus.COMPLETED, logs=logs)
            label(new_web, second)
            at_plan = wait_for(store, second, gate=Gate.PLAN, logs=logs)
        finally:
            stop(worker)
        approve(new_web, gh, second, at_plan)
    assert waiting_tasks(connection) == ["event-approve-second"]  # for the rollback

    assert FailedJobRegistry(queue=queue(connection)).count == 0  # both ways, no task failed

    # 3. The old worker again (a rollback mid-rollout): it takes the task the new version queued
    # (the entry point resolves), finds a record written by a newer release (fields it does not
    # know) and leaves it untouched: nothing is lost or damaged, the job waits where it was.
    stored = connection.get(f"stepwise:job:{at_plan.id}")
    seen_before = logs[1].read_text().count("state_error")
    worker = stepwise_worker(old, logs[1], command=OLD_STEPWISE, cwd=previous_release)
    try:
        deadline = time.monotonic() + SETTLE_S
        while logs[1].read_text().count("state_error") == seen_before \
                and time.monotonic() < deadline:
            time.sleep(0.2)
        assert logs[1].read_text().count("state_error") > seen_before  # it said why, and stopped
    finally:
        stop(worker)
    assert connection.get(f"stepwise:job:{at_plan.id}") == stored
    waiting = store.find(second.full_name, 1)
    assert waiting is not None and waiting.gate is not None and waiting.gate.kind is Gate.PLAN

    # 4. The new release again: its worker carries the job on from the record as it was.
    with stepwise_serve(env, logs[2]):
        worker = stepwise_worker(env, logs[3])
        try:
            wait_for(store, second, status=JobStatus.COMPLETED, logs=logs)
        finally:
            stop(worker)
    for log in logs:
        text = log.read_text()
        assert "Invalid attribute name" not in text and "no handler installed" not in text, \
            log.name
    assert f'"version": "{running_version()}"' in logs[3].read_text()  # what the new one runs
    assert "starting" not in logs[0].read_text()  # the old web app ran the old code (no such line)
