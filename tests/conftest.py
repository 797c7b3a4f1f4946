"""Shared fixtures: temporary git repositories built from a dict of files and a real redis-server;
every test that uses the server is marked `integration`."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import pytest

# Every save in the tests proves that the batches it did not name are unchanged in the store.
os.environ.setdefault("STEPWISE_STORE_CHECK", "1")

from tests.kit.repos import make_repo

RepoFactory = Callable[..., Path]


@pytest.fixture
def repo_factory(tmp_path: Path) -> RepoFactory:
    counter = iter(range(1000))

    def factory(files: Mapping[str, str | bytes], *, name: str | None = None) -> Path:
        return make_repo(tmp_path / (name or f"repo{next(counter)}"), files)

    return factory


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    """A real redis-server for the whole session (each test should flush what it uses)."""
    from tests.kit.redis_server import running_redis

    with running_redis() as url:
        yield url


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "redis_url" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.integration)
