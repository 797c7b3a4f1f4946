"""Redis losing its data (FLUSHALL on a real redis-server under a real `stepwise serve` and a
real `stepwise worker`, the fake GitHub): the worker notices the missing data marker within a
heartbeat, registers again (the metric and `--check` count it without a restart) and rebuilds
every job GitHub shows: a job at a milestone gate comes back at its gate and completes once
approved; a job at its plan gate, which never pushed anything, cannot be rebuilt and its issue
says what to do (relabel)."""

from __future__ import annotations

import re
import subprocess
import time
from pathlib import Path

import httpx
import pytest
import redis
from rq import Worker

from bot.plumbing.queue import queue
from bot.plumbing.redis_store import RedisStore
from bot.server.recovery import LOST_MARKER
from jobs.kernel.job import Job
from jobs.kernel.model import Gate, JobStatus
from tests.kit.chaos.killing import wait_past_second_of
from tests.kit.chaos.sample import ISSUE_BODY, ISSUE_TITLE, sample_repo
from tests.kit.chaos.settings import SHORT
from tests.kit.github import FakeGitHub
from tests.kit.github_model import FakeRepo
from tests.kit.redis_server import running_redis
from tests.kit.stepwise_procs import (
    SECRET,
    STEPWISE,
    base_env,
    stepwise_serve,
    stepwise_worker,
    stop,
)
from tests.kit.webhooks import deliver, make_event

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(360)]
MAINTAINER = "maria"
RELABEL = "Remove the `stepwise` label and add it again to start the job over"


def new_repo(gh: FakeGitHub, name: str, **options: object) -> FakeRepo:
    repo = gh.add_repo("octo-org", name, sample_repo(files=4, **options))  # type: ignore[arg-type]
    gh.add_issue(repo, ISSUE_TITLE, ISSUE_BODY, user=MAINTAINER, labels=["stepwise"])
    gh.set_permission(repo, MAINTAINER, "maintain")
    return repo


def label(web: str, repo: FakeRepo) -> None:
    payload = make_event("issues.labeled", repo=repo, issue_number=1, sender=MAINTAINER,
                         label="stepwise")
    assert deliver(web, "issues", payload, secret=SECRET,
                   delivery_id=f"label-{repo.name}").status_code == 202


def approve(web: str, gh: FakeGitHub, repo: FakeRepo, job: Job) -> None:
    assert job.gate is not None
    wait_past_second_of(job.gate.opened_at)
    posted = gh.add_comment(repo, 1, "/stepwise approve", user=MAINTAINER)
    payload = make_event("issue_comment.created", repo=repo, issue_number=1,
                         comment_body="/stepwise approve", comment_user=MAINTAINER,
                         sender=MAINTAINER, comment_id=posted.id)
    payload["comment"]["created_at"] = posted.created_at.strftime("%Y-%m-%dT%H:%M:%SZ")
    assert deliver(web, "issue_comment", payload, secret=SECRET,
                   delivery_id=f"approve-{posted.id}").status_code == 202


def wait_job(store: RedisStore, repo: FakeRepo, ok: object, what: str, log: Path) -> Job:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        job = store.find(repo.full_name, 1)
        if job is not None and ok(job):  # type: ignore[operator]
            return job
        time.sleep(0.3)
    raise AssertionError(f"{repo.name}: {what}\n{log.read_text()[-4000:]}")


def workers_metric(web: str) -> int:
    text = httpx.get(f"{web}/metrics", timeout=10).text
    return sum(int(float(m[1])) for m in
               re.finditer(r'^stepwise_workers\{state="[a-z]+"\} (\S+)$', text, re.MULTILINE))


def test_a_redis_that_lost_its_data_is_rebuilt_from_github(tmp_path: Path) -> None:
    with running_redis() as url, FakeGitHub(root=tmp_path / "github") as gh:
        env = base_env(url, tmp_path / "work", STEPWISE_APP_ID=str(gh.app_id),
                       STEPWISE_PRIVATE_KEY=gh.private_key_pem,
                       STEPWISE_GITHUB_API_URL=gh.base_url, **SHORT)
        connection = redis.Redis.from_url(url)
        store = RedisStore(connection)
        log = tmp_path / "worker.log"
        milestones = new_repo(gh, "milestones", batches_per_milestone=2)
        planned = new_repo(gh, "planned", require_plan_approval=True)
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
