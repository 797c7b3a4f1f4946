"""Fixtures of the GitHub adapter's tests: the loopback fake GitHub on a clock the test moves,
the App (bot/github/app.py) and installation 1's client (bot/github/client.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.github.app import GitHubApp
from bot.github.client import Installation
from tests.bot.github.client_kit import Clock, start_fake
from tests.kit.github import FakeGitHub


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def gh(tmp_path: Path, clock: Clock) -> Iterator[FakeGitHub]:
    fake = start_fake(tmp_path / "gh", clock=clock.utc)
    yield fake
    fake.stop()


@pytest.fixture
def app(gh: FakeGitHub, clock: Clock) -> GitHubApp:
    return GitHubApp(app_id=gh.app_id, private_key=gh.private_key_pem, base_url=gh.base_url, timeout=10,
                     clock=clock)


@pytest.fixture
def inst(app: GitHubApp) -> Installation:
    return app.client(1)
