"""The per-installation write budget (bot/github/write_budget.py) on a real Redis: GitHub's 80
content-creating requests a minute and 500 an hour, spaced after a burst, shared by every worker;
a short wait is slept, a long one re-queues the step (WriteBudgetWait). Against the fake GitHub
that enforces the same secondary limit, an App with the budget makes 600 comments and is refused
none, while the same App without it is refused at the 81st write in a minute."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import redis

from bot.github.app import GitHubApp
from bot.github.errors import RATE_LIMITED, ForgeError
from bot.github.write_budget import (
    BudgetLimits,
    WriteBudget,
    WriteBudgetWait,
    is_content_creating,
)
from bot.plumbing.keys import github_writes_key
from bot.server.rate_limits import rate_limit_wait_s
from tests.kit.github import FakeGitHub

KEY = "1"


class Clock:
    """Seconds since the epoch that only move when told (and when a budget sleeps)."""

    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds

    def as_datetime(self) -> datetime:
        return datetime.fromtimestamp(self.now, UTC)


@pytest.fixture
def connection(redis_url: str) -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(redis_url)
    client.flushdb()
    yield client


def budget(connection: redis.Redis, clock: Clock, **limits: float) -> WriteBudget:
    return WriteBudget(connection, BudgetLimits(**limits),  # type: ignore[arg-type]
                       clock=clock, sleep=clock.sleep, key=github_writes_key)


def test_a_burst_goes_at_once_then_writes_are_spaced(connection: redis.Redis) -> None:
    clock = Clock()
    pacer = budget(connection, clock)
    assert [pacer.take(KEY) for _ in range(10)] == [0.0] * 10  # the burst
    assert pacer.take(KEY) == pytest.approx(60 / 70, abs=1e-5)  # then spaced: 10 + 70 a minute
    assert pacer.used(KEY) == (10, 10)  # a refused take takes nothing
    clock.sleep(60 / 70)
    assert pacer.take(KEY) == 0.0


def test_never_more_than_80_a_minute_nor_500_an_hour(connection: redis.Redis) -> None:
    clock = Clock()
    pacer = budget(connection, clock, max_inline_wait_s=3600.0)
    times = []
    for _ in range(600):
        pacer.spend(KEY)
        times.append(clock.now)
    for i, start in enumerate(times):
        assert sum(1 for t in times[i:] if t < start + 60) <= 80
        assert sum(1 for t in times[i:] if t < start + 3600) <= 500
    assert times[499] - times[0] < 3600 <= times[500] - times[0]  # the 501st waits the hour out
    spaced = times[10:500]  # after the first burst (and until the hour's wait refills it)
    gaps = [b - a for a, b in itertools.pairwise(spaced)]
    assert min(gaps) >= 60 / 70 - 1e-6, [(n, g) for n, g in enumerate(gaps) if g < 60 / 70 - 1e-6][:5]


def test_workers_share_one_budget_per_installation(connection: redis.Redis) -> None:
    clock = Clock()
    first, second = budget(connection, clock, burst=80), budget(connection, clock, burst=80)
    for n in range(80):
        assert (first if n % 2 else second).take(KEY) == 0.0
    assert first.take(KEY) > 0 and second.take(KEY) > 0
    assert first.take("2") == 0.0  # another installation has its own


def test_a_long_wait_re_queues_the_step_rather_than_sleeping(connection: redis.Redis) -> None:
    clock = Clock()
    pacer = budget(connection, clock, per_minute=80, burst=80)
    for _ in range(80):
        pacer.spend(KEY)
    start = clock.now
    with pytest.raises(WriteBudgetWait) as caught:
        pacer.spend(KEY)
    assert clock.now == start  # no sleep: the worker is free
    assert caught.value.code == RATE_LIMITED and caught.value.evidence["asked"] is True
    assert caught.value.evidence["rate_limit"] == "write_budget"
    assert rate_limit_wait_s(caught.value, 0) == pytest.approx(60.0)  # when a slot is free
    assert "80 a minute, 500 an hour" in caught.value.message


@pytest.mark.parametrize(("method", "path", "counted"), [
    ("POST", "/repos/o/r/issues/1/comments", True), ("PATCH", "/repos/o/r/pulls/2", True),
    ("PUT", "/repos/o/r/pulls/2/merge", True), ("DELETE", "/repos/o/r/issues/1/labels/x", True),
    ("GET", "/repos/o/r/issues", False),
    ("POST", "/app/installations/1/access_tokens", False)])
def test_which_requests_create_content(method: str, path: str, counted: bool) -> None:
    assert is_content_creating(method, path) is counted


def fake_and_app(tmp_path: Path, clock: Clock, pacer: WriteBudget | None) -> tuple[FakeGitHub,
                                                                                 GitHubApp]:
    gh = FakeGitHub(root=tmp_path / "gh", clock=clock.as_datetime)
    gh.add_repo("octo", "widgets", {"a.py": "x = 1\n"})
    gh.add_issue("octo/widgets", "Lots to say", "")
    app = GitHubApp(app_id=gh.app_id, private_key=gh.private_key_pem, base_url=gh.base_url,
                    timeout=10, clock=clock, budget=pacer)
    return gh, app


def test_with_the_budget_the_fake_refuses_no_write_and_without_it_the_81st(
        tmp_path: Path, connection: redis.Redis) -> None:
    clock = Clock()
    gh, app = fake_and_app(tmp_path / "paced", clock, budget(connection, clock,
                                                              max_inline_wait_s=3600.0))
    with gh:
        client = app.client(1)
        for n in range(120):
            client.create_comment("octo", "widgets", 1, f"note {n}")
            clock.sleep(0.01)
        assert gh.rate_limits.refused_writes == 0
        assert len(gh.comments_on(gh.repos["octo/widgets"], 1)) == 120
        assert clock.now - 1_800_000_000.0 >= 60  # 120 writes need more than a minute

    clock = Clock()
    gh, app = fake_and_app(tmp_path / "unpaced", clock, None)
    with gh:
        client = app.client(1)
        with pytest.raises(ForgeError) as refused:
            for n in range(120):
                client.create_comment("octo", "widgets", 1, f"note {n}")
                clock.sleep(0.01)
        assert refused.value.code == RATE_LIMITED
        assert refused.value.evidence["rate_limit"] == "secondary"
        assert len(gh.comments_on(gh.repos["octo/widgets"], 1)) == 80


def test_the_budget_spent_in_a_call_becomes_a_rate_limit_wait_not_an_unreachable_github(
        tmp_path: Path, connection: redis.Redis) -> None:
    clock = Clock()
    gh, app = fake_and_app(tmp_path, clock, budget(connection, clock, burst=80))
    with gh:
        client = app.client(1)
        for n in range(80):
            client.create_comment("octo", "widgets", 1, f"note {n}")
        before = len(gh.requests)
        with pytest.raises(ForgeError) as waiting:
            client.create_comment("octo", "widgets", 1, "one too many")
        assert isinstance(waiting.value, WriteBudgetWait)
        assert len(gh.requests) == before  # never sent
        clock.sleep(60)
        client.create_comment("octo", "widgets", 1, "after the minute")
        assert timedelta(seconds=clock.now - 1_800_000_000.0) >= timedelta(seconds=60)
