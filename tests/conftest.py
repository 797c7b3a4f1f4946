"""Shared fixtures: temporary git repositories built from a dict of files and a real redis-server;
every test that uses the server is marked `integration`, every test of the pure rooms alone `pure`
(tests/kit/pure_tests.py); under pytest-xdist the files of slow tests are queued first."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import pytest

# Every save in the tests proves that the batches it did not name are unchanged in the store.
os.environ.setdefault("STEPWISE_STORE_CHECK", "1")
# pytest-xdist's workers (execnet) export COLUMNS=80 and LINES=24: rich would freeze them into
# the CLI's module-level consoles at import, so a test's own COLUMNS would never apply. Every
# worker runs as a process without a terminal does.
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.pop("COLUMNS", None)
    os.environ.pop("LINES", None)

from jobs.composition import install
from tests.kit.repos import make_repo

# The test kit's composition root: the built-in recipes, installed explicitly (importing `jobs`
# registers nothing), as local mode, the server wiring and the CLI each do.
install()

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


@pytest.fixture(autouse=True)
def github_openapi_check() -> Iterator[None]:
    """Fail a test whose fake GitHub saw a request, or gave an answer, that GitHub's own API
    description (npm @octokit/openapi) does not allow; see tests/kit/github_openapi.py."""
    from tests.kit.github import LIVE_FAKES

    for fake in LIVE_FAKES:
        fake.openapi_violations.clear()
    yield
    found = [line for fake in LIVE_FAKES for line in fake.openapi_violations]
    LIVE_FAKES[:] = [fake for fake in LIVE_FAKES if fake.running]
    if found:
        unique = list(dict.fromkeys(found))
        pytest.fail(f"the fake GitHub saw {len(unique)} calls GitHub's API description does not allow:\n"
                    + "\n".join(unique[:20]), pytrace=False)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    from tests.kit.pure_tests import is_pure_test

    for item in items:
        fixtures = tuple(getattr(item, "fixturenames", ()))
        if "redis_url" in fixtures:
            item.add_marker(pytest.mark.integration)
        parameters = getattr(getattr(item, "callspec", None), "params", {})
        if is_pure_test(Path(str(item.fspath)), tuple(set(fixtures) - set(parameters))):
            item.add_marker(pytest.mark.pure)
    if hasattr(config, "workerinput"):  # a pytest-xdist worker: its order is the run's queue
        items[:] = slow_files_first(items)


def slow_files_first(items: list[pytest.Item]) -> list[pytest.Item]:
    """The files holding a `slow` test first, then the others, each part with the files of most
    tests first, every file's tests kept together and in order. scripts/test hands files to the
    workers in this order (`--dist loadfile --no-loadscope-reorder`), so a file that takes
    minutes starts with the run instead of ending it on one worker while the others idle."""
    files: dict[str, list[pytest.Item]] = {}
    for item in items:
        files.setdefault(item.nodeid.split("::", 1)[0], []).append(item)

    def weight(tests: list[pytest.Item]) -> tuple[bool, int]:
        return not any(test.get_closest_marker("slow") for test in tests), -len(tests)

    return [item for tests in sorted(files.values(), key=weight) for item in tests]
