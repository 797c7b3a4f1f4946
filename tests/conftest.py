"""Shared fixtures: temporary git repositories built from a dict of files."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from tests.support import make_repo

RepoFactory = Callable[..., Path]


@pytest.fixture
def repo_factory(tmp_path: Path) -> RepoFactory:
    counter = iter(range(1000))

    def factory(files: Mapping[str, str | bytes], *, name: str | None = None) -> Path:
        return make_repo(tmp_path / (name or f"repo{next(counter)}"), files)

    return factory
