"""The GitHub App end to end: signed webhooks over real HTTP, a real Redis and RQ worker, the real
githubkit client against the loopback fake GitHub, and real git pushes to its bare repository."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from itertools import count
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis
import uvicorn
from fastapi import FastAPI
from rq import SimpleWorker

from bot.app import create_app
from bot.context import ServerContext
from bot.handlers import handlers
from bot.settings import Settings
from jobs.model import BatchStatus, Gate, JobStatus
from jobs.sandbox import make_sandbox
from jobs.worker import install_handlers, queue
from tests.test_e2e_support import config_text, sample_files
from tests.fakes.github import FakeGitHub
from tests.fakes.webhooks import deliver, make_event
from tests.redis_server import free_port

SECRET = "webhook-s3cret"
OWNER, NAME = "octo-org", "widgets"
REPO = f"{OWNER}/{NAME}"
ISSUE_BODY = """`old_sum()` is deprecated; move every caller to `new_sum()`.

```stepwise
recipe: replace
paths: ["calc/**/*.py"]
exclude: ["calc/legacy.py"]
find: ['\\bold_sum\\(']
replace: 'new_sum('
not_doing: ["remove old_sum() itself"]
```
"""


@contextmanager
def served(app: FastAPI) -> Iterator[str]:
    """The app behind a real uvicorn server on a free loopback port."""
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


class World:
    """Everything one story needs, with helpers that read like the story."""

    def __init__(self, gh: FakeGitHub, url: str, connection: redis.Redis, ctx: ServerContext):
        self.gh, self.url, self.redis, self.ctx = gh, url, connection, ctx
        self.comment_ids = count(5001)
        self.repo = gh.repos[REPO]

    def send(self, event: str, **overrides: Any) -> httpx.Response:
        payload = make_event(event, repo=REPO, **overrides)
        if "comment" in payload:
            payload["comment"]["created_at"] = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
            time.sleep(1.01)  # GitHub's timestamps have one-second resolution
        with httpx.Client(base_url=self.url, trust_env=False) as client:
            return deliver(client, event.split(".")[0], payload, secret=SECRET)

    def comment(self, body: str, *, by: str, on: int = 1) -> httpx.Response:
        return self.send("issue_comment.created", issue_number=on, comment_body=body,
                         comment_user=by, sender=by, comment_id=next(self.comment_ids))

    def work(self) -> None:
        SimpleWorker([queue(self.redis)], connection=self.redis).work(burst=True)

    def job(self) -> Any:
        job = self.ctx.store.find(REPO, 1)
        assert job is not None
        return job

    def bodies(self, number: int) -> list[str]:
        return [c.body for c in self.gh.comments_on(self.repo, number)]


@pytest.fixture
def world(tmp_path: Path, redis_url: str) -> Iterator[World]:
    connection = redis.Redis.from_url(redis_url)
    connection.flushdb()
    with FakeGitHub(root=tmp_path / "github") as gh:
        gh.add_repo(OWNER, NAME, sample_files(broken=True,
                                              config=config_text(batches_per_milestone=1)))
        gh.add_issue(REPO, "Replace old_sum() with new_sum()", ISSUE_BODY, user="maria")
        for login, role in {"maria": "maintain", "rita": "read", "tom": "triage"}.items():
            gh.set_permission(REPO, login, role)
        settings = Settings(app_id=gh.app_id, private_key=gh.private_key_pem,
                            webhook_secret=SECRET, redis_url=redis_url,
                            github_api_url=gh.base_url, workdir=tmp_path / "work",
                            app_slug="stepwise")
        ctx = ServerContext.from_settings(settings, connection=connection,
                                          sandbox=make_sandbox(require_isolation=True))
        install_handlers(handlers(ctx))
        with served(create_app(settings, connection)) as url:
            yield World(gh, url, connection, ctx)


def test_the_whole_story_through_signed_webhooks(world: World) -> None:
    # A maintainer labels the issue: the plan is posted on the issue; no PR before a commit.
    assert world.send("issues.labeled", issue_number=1, sender="maria").status_code == 202
    world.work()
    job = world.job()
    assert job.status is JobStatus.AWAITING_HUMAN and job.gate.kind is Gate.PLAN
    plan = [b for b in world.bodies(1) if "Plan for #1" in b]
    assert len(plan) == 1 and "`/stepwise approve`" in plan[0]
    assert world.gh.pull_for(world.repo, job.branch) is None

    # Approve: batch 1 is committed and pushed, the draft PR opens, milestone 1 reports.
    world.comment("/stepwise approve", by="maria")
    world.work()
    job = world.job()
    assert job.batch(1).status is BatchStatus.COMPLETED
    assert world.gh.branch_head(world.repo, job.branch) == job.head_sha
    pull = world.gh.pull_for(world.repo, job.branch)
    assert pull is not None and pull.draft and "Stepwise #1" in pull.body
    assert job.gate.kind is Gate.MILESTONE
    assert any("Waiting at gate `milestone`" in b for b in world.bodies(pull.number))

    # A read-only user's approve is refused and changes nothing.
    version = job.version
    world.comment("/stepwise approve", by="rita", on=pull.number)
    world.work()
    assert world.job().version == version and world.job().gate.kind is Gate.MILESTONE
    assert any("Refused" in b and "@rita" in b for b in world.bodies(pull.number))

    # Approve again: batch 2 breaks the tests twice and pauses with a failure report.
    world.comment("/stepwise approve", by="maria", on=pull.number)
    world.work()
    job = world.job()
    assert job.gate.kind is Gate.FAILURE and job.batch(2).commit is None
    report = [b for b in world.bodies(pull.number) if "Waiting at gate `failure`" in b]
    assert report and "validation_failed" in report[0] and "/stepwise retry" in report[0]

    # Skip it with a reason; approve the next milestone; the job completes.
    world.comment("/stepwise skip needs a manual import fix", by="maria", on=pull.number)
    world.work()
    assert world.job().batch(2).status is BatchStatus.SKIPPED
    world.comment("/stepwise approve", by="maria", on=pull.number)
    world.work()
    job = world.job()
    assert job.status is JobStatus.COMPLETED, job.status
    log = world.gh.git_log(world.repo, job.branch)
    assert sum("batch 1/3" in s for s in log) == 1 and sum("batch 3/3" in s for s in log) == 1
    assert not any("batch 2/3" in s for s in log)
    note = world.gh.read_file(world.repo, job.note_path, ref=job.branch)
    assert "needs a manual import fix" in note and job.batch(3).commit[:7] in note
    assert not world.gh.pull_for(world.repo, job.branch).draft
    assert f"{REPO}#{pull.number}:pr-ready" in world.gh.effects
    assert any(b.startswith("Stepwise completed.") for b in world.bodies(1))
