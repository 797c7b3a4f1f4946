"""Fixtures for the App tests: the fake GitHub, a real Redis and RQ worker, the app over real HTTP."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis
import uvicorn
from fastapi import FastAPI

from bot.github.write_budget import WriteBudget
from bot.plumbing.queue import queue
from bot.server.context import ServerContext
from bot.server.handlers import handlers
from bot.server.worker import install_handlers
from bot.settings import Settings
from bot.web.app import create_app
from jobs.adapters.sandbox import make_sandbox
from jobs.composition import with_feature
from jobs.features.bisect.wiring import bisect_feature
from jobs.features.ci.wiring import CANDIDATES as CI_CANDIDATES
from tests.kit.burst_worker import BurstWorker
from tests.kit.github import FakeGitHub
from tests.kit.github_rate_limits import WORLD_WRITE_BURST
from tests.kit.local_e2e import config_text, sample_files
from tests.kit.loopback import TLS
from tests.kit.redis_server import free_port
from tests.kit.waiting import ShiftedClock, pass_the_second, pass_time
from tests.kit.webhooks import deliver, make_event

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
        self.repo = gh.repos[REPO]
        self.sent = 0  # events sent: each one's body is its own, as GitHub's are

    def send(self, event: str, *, delivery_id: str | None = None, repo: str = REPO,
             **overrides: Any) -> httpx.Response:
        payload = make_event(event, repo=repo, **overrides)
        self._account_ids(payload)
        self._stamp(payload)
        if event in ("issues.closed", "pull_request.closed") and not overrides.get("merged"):
            # GitHub closed it before telling: the worker asks GitHub before it cancels.
            number = int(overrides.get("issue_number") or overrides.get("pr_number") or 1)
            if number in self.gh.repos[repo].issues:
                self.gh.close_issue(repo, number)
        if "comment" in payload:
            created = self.ctx.clock().replace(microsecond=0)  # the app's clock: a test may shift it
            payload["comment"]["created_at"] = created.strftime("%Y-%m-%dT%H:%M:%SZ")
            # GitHub's timestamps are to the second: a gate this comment opens is stamped later.
            pass_the_second(created, self.ctx.clock)
        with httpx.Client(base_url=self.url, trust_env=False, verify=TLS) as client:
            return deliver(client, event.split(".")[0], payload, secret=SECRET,
                           delivery_id=delivery_id)

    def _stamp(self, payload: dict[str, Any]) -> None:
        """A new event changes its subject's `updated_at` (a push its repository's
        `pushed_at`): two events GitHub sends never have the same body (a body seen twice is a
        replay, bot/web/replays.py)."""
        self.sent += 1
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(1_577_836_800 + self.sent))
        for key in ("issue", "pull_request", "check_run", "check_suite", "workflow_run"):
            if isinstance(payload.get(key), dict):
                payload[key]["updated_at"] = stamp
                return
        if isinstance(payload.get("repository"), dict):
            payload["repository"]["pushed_at"] = 1_577_836_800 + self.sent

    def _account_ids(self, payload: Any) -> None:
        """The fake GitHub's account id on every user of the payload (a renamed account keeps
        its id, a login claimed again is a new one: GitHubState.rename_user)."""
        if isinstance(payload, dict):
            if isinstance(payload.get("login"), str) and isinstance(payload.get("id"), int) \
                    and payload.get("type") in ("User", "Bot"):
                payload["id"] = self.gh.user_id(payload["login"])
            for value in payload.values():
                self._account_ids(value)
        elif isinstance(payload, list):
            for value in payload:
                self._account_ids(value)

    def post(self, event: str, body: bytes, **options: Any) -> httpx.Response:
        with httpx.Client(base_url=self.url, trust_env=False, verify=TLS) as client:
            return deliver(client, event, body, secret=options.pop("secret", SECRET), **options)

    def queued(self) -> int:
        return queue(self.redis).count

    def comment(self, body: str, *, by: str, on: int = 1, delivery_id: str | None = None,
                repo: str = REPO) -> httpx.Response:
        """A person comments (the comment exists on the fake, as on GitHub) and it is delivered."""
        posted = self.gh.add_comment(self.gh.repos[repo], on, body, user=by)
        return self.send("issue_comment.created", issue_number=on, comment_body=body,
                         comment_user=by, sender=by, comment_id=posted.id,
                         delivery_id=delivery_id, repo=repo)

    def label_and_approve(self, number: int = 1, *, by: str = "maria") -> None:
        """`by` labels issue `number` and approves its plan, the worker running after each."""
        self.send("issues.labeled", issue_number=number, sender=by)
        self.work()
        self.comment("/stepwise approve", by=by, on=number)
        self.work()

    def work(self, max_jobs: int | None = None) -> None:
        BurstWorker([queue(self.redis)], connection=self.redis).work(burst=True,
                                                                     max_jobs=max_jobs)

    def job(self, number: int = 1) -> Any:
        job = self.ctx.store.find(REPO, number)
        assert job is not None
        return job

    def bodies(self, number: int) -> list[str]:
        return [c.body for c in self.gh.comments_on(self.repo, number)]


@contextmanager
def open_world(tmp_path: Path, redis_url: str, *, files: dict[str, str | bytes] | None = None,
               github: dict[str, Any] | None = None, split_batches: bool = True,
               **settings: Any) -> Iterator[World]:
    """A fake GitHub holding the sample repository and issue #1, the app served over HTTP,
    a worker context on a flushed real Redis. `github` holds FakeGitHub options
    (enterprise=True: GHES's layout and only its REST API version). The sample's batch 2
    fails: it is split as in production (its good file committed, the broken one set aside as
    batch 4 at the end, where the failure gate, retry and skip are steered);
    `split_batches=False` keeps the unsplit failure gate at batch 2 for a story about that."""
    connection = redis.Redis.from_url(redis_url)
    connection.flushdb()
    # git over smart HTTP with the installation token, as a worker reaches GitHub (not by path)
    with FakeGitHub(root=tmp_path / "github", **{"git_http": True, **(github or {})}) as gh:
        gh.add_repo(OWNER, NAME, files or sample_files(
            broken=True, config=config_text(batches_per_milestone=1)))
        gh.add_issue(REPO, "Replace old_sum() with new_sum()", ISSUE_BODY, user="maria")
        for login, role in {"maria": "maintain", "rita": "read", "tom": "triage"}.items():
            gh.set_permission(REPO, login, role)
        options: dict[str, Any] = {
            "app_id": gh.app_id, "private_key": gh.private_key_pem, "webhook_secret": SECRET,
            "redis_url": redis_url, "github_api_url": gh.base_url,
            "workdir": tmp_path / "work", "app_slug": "stepwise",
            "github_write_burst": WORLD_WRITE_BURST, **settings,
        }
        config = Settings(**options)
        ctx = ServerContext.from_settings(config, connection=connection,
                                          sandbox=make_sandbox(require_isolation=True))
        ctx.features = with_feature(ctx.features,
                                    bisect_feature(ci=CI_CANDIDATES, enabled=split_batches))
        # One clock for the app and the fake GitHub (a test that sets ctx.clock sets both): a
        # comment moves it into the next second (World.send) instead of waiting for that second.
        ctx.clock = ShiftedClock()
        gh.clock = lambda: ctx.clock().replace(microsecond=0)
        # The App's write spacing (bot/github/write_budget.py) keeps that time too: the fake
        # counts GitHub's writes a minute on it, so a long story is spaced as in production
        # without sleeping through the spacing.
        budget = ctx.github.budget
        assert isinstance(budget, WriteBudget)
        budget.clock = lambda: ctx.clock().timestamp()
        budget.sleep = lambda seconds: pass_time(ctx.clock, seconds)
        install_handlers(handlers(ctx))
        with served(create_app(config, connection)) as url:
            yield World(gh, url, connection, ctx)


@pytest.fixture
def world(tmp_path: Path, redis_url: str) -> Iterator[World]:
    with open_world(tmp_path, redis_url) as opened:
        yield opened


@pytest.fixture
def client(redis_url: str) -> Iterator[redis.Redis]:
    """A flushed connection to the session's real redis-server (the plumbing and server tests;
    a folder with a `client` of its own, such as the task center's, overrides it)."""
    connection = redis.Redis.from_url(redis_url)
    connection.flushdb()
    yield connection
    connection.flushdb()
    connection.close()
