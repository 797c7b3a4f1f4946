"""Rate limits honoured on every path (bot/github/limited.py, errors.py): a limit GitHub answered
to one worker stops every request of that installation, from any worker, the reconciler
included, until it is over; a 403 or 429 carrying primary-limit headers waits for
`x-ratelimit-reset`, never read as a secondary limit's minute. Against the fake GitHub, whose
rate-limit headers count down and whose spent primary limit answers 429."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from bot.github.app import GitHubApp
from bot.github.errors import RATE_LIMITED, ForgeError, rate_limit_of_answer
from bot.github.limited import LimitedUntil, LimitedWait
from bot.plumbing.keys import github_limited_key
from bot.server.reconciler import reconcile
from jobs.kernel.model import Gate, JobStatus
from tests.bot.conftest import open_world
from tests.kit.github import FakeGitHub

OWNER, NAME = "octo", "widgets"
REPO = f"{OWNER}/{NAME}"


class Clock:
    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def connection(redis_url: str) -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(redis_url)
    client.flushdb()
    yield client


@pytest.fixture
def gh(tmp_path: Path) -> Iterator[FakeGitHub]:
    with FakeGitHub(root=tmp_path / "gh") as fake:
        fake.add_repo(OWNER, NAME, {"a.py": "x = 1\n"})
        fake.add_issue(REPO, "An issue", "")
        yield fake


def worker(gh: FakeGitHub, limited: LimitedUntil) -> GitHubApp:
    return GitHubApp(app_id=gh.app_id, private_key=gh.private_key_pem, base_url=gh.base_url,
                     timeout=10, limited=limited)


@pytest.mark.parametrize("status", [403, 429])
def test_primary_limit_headers_are_read_before_the_secondary_interpretation(status: int) -> None:
    now = 1_800_000_000.0
    headers = {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(now) + 1800),
               "retry-after": "60"}
    assert rate_limit_of_answer(status, headers, "API rate limit exceeded", now=now) == \
        ("primary", 1800.0)
    assert rate_limit_of_answer(status, {"x-ratelimit-remaining": "12", "retry-after": "30"},
                                "You have exceeded a secondary rate limit", now=now) == \
        ("secondary", 30.0)


def test_the_fakes_spent_primary_limit_answers_429_and_the_call_waits_for_the_reset(
        gh: FakeGitHub) -> None:
    gh.rate_limits.primary_limit = 5
    client = gh.client()
    remaining = [int(client.request("GET", f"/repos/{REPO}").headers["x-ratelimit-remaining"])
                 for _ in range(5)]
    assert remaining == [4, 3, 2, 1, 0]  # the headers count down, as GitHub's do
    app = GitHubApp(app_id=gh.app_id, private_key=gh.private_key_pem, base_url=gh.base_url,
                    timeout=10)
    with pytest.raises(ForgeError) as limited:
        app.client(1).repo(OWNER, NAME)
    assert limited.value.code == RATE_LIMITED
    assert limited.value.evidence["status"] == 429
    assert limited.value.evidence["rate_limit"] == "primary"
    assert limited.value.evidence["retry_after"] > 3000  # the hour's reset, not 60 s


def test_a_limit_met_by_one_worker_stops_every_worker_until_it_is_over(
        gh: FakeGitHub, connection: redis.Redis) -> None:
    clock = Clock()
    limited = LimitedUntil(connection, clock=clock, key=github_limited_key)
    first, second = worker(gh, limited), worker(gh, LimitedUntil(connection, clock=clock,
                                                                 key=github_limited_key))
    gh.fail_secondary_rate_limit("POST", r"/issues/1/comments$", retry_after=None)
    with pytest.raises(ForgeError) as met:
        first.client(1).create_comment(OWNER, NAME, 1, "hello")
    assert met.value.evidence["rate_limit"] == "secondary"
    def installation_requests() -> int:  # (a new worker still mints its token: the App's)
        return sum(not r.path.endswith("/access_tokens") for r in gh.requests)

    sent = installation_requests()
    for call in (lambda: second.client(1).repo(OWNER, NAME),  # a read from another worker
                 lambda: first.client(1).create_comment(OWNER, NAME, 1, "hello")):
        with pytest.raises(LimitedWait) as waiting:
            call()
        assert waiting.value.code == RATE_LIMITED and waiting.value.evidence["asked"] is True
        assert 59 <= waiting.value.evidence["retry_after"] <= 60  # at least a minute
    assert installation_requests() == sent  # nothing reached GitHub
    clock.now += 61
    second.client(1).create_comment(OWNER, NAME, 1, "hello")
    assert [c.body for c in gh.comments_on(gh.repos[REPO], 1)] == ["hello"]


def test_the_reconciler_sends_no_owed_comment_while_the_installation_is_limited(
        tmp_path: Path, redis_url: str) -> None:
    with open_world(tmp_path, redis_url, call_backoff_s=(0.01,)) as world:
        world.gh.fail_secondary_rate_limit("POST", r"/issues/1/comments$", retry_after=None,
                                           times=1)
        world.send("issues.labeled", issue_number=1, sender="maria")
        world.work()
        job = world.job()
        assert job.status is JobStatus.AWAITING_HUMAN and job.gate is not None
        assert job.gate.kind is Gate.PLAN and job.outbox  # the plan is owed
        posts = len(world.gh.requests_to("POST", r"/issues/1/comments$"))
        for _ in range(6):  # passes in a row while the minute lasts: not one POST
            assert reconcile(world.ctx).still_owed == [job.id]
        assert len(world.gh.requests_to("POST", r"/issues/1/comments$")) == posts
        limited = world.ctx.github.limited
        assert limited is not None
        connection = world.redis
        connection.delete(*connection.keys("stepwise:github-limited:*"))  # the minute is over
        assert reconcile(world.ctx).published == [job.id]
        assert world.job().gate is not None and world.job().gate.shown_at is not None
