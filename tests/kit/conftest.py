"""Fixtures for the fakes' own tests: the loopback fake GitHub (`fake_github`, `fake_github_factory`,
the same two other test packages import from tests.kit.github), an App key per module, a fake
holding octo/widgets (`gh`) and an installation client on it (`client`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from githubkit import GitHub

from tests.kit.fake_github_kit import NAME, OWNER, installation_client
from tests.kit.github import FakeGitHub, fake_github, fake_github_factory
from tests.kit.github_auth import generate_app_key

__all__ = ["fake_github", "fake_github_factory"]


@pytest.fixture(scope="module")
def app_key() -> tuple[str, str]:
    return generate_app_key()


@pytest.fixture
def gh(tmp_path: Path, app_key: tuple[str, str]) -> Iterator[FakeGitHub]:
    with FakeGitHub(root=tmp_path / "gh", public_key=app_key[1]) as fake:
        files = {"src/a.py": "x = 1\n", "README.md": "hi\n"}
        fake.add_repo(OWNER, NAME, files, config="trigger_label: stepwise\n")
        yield fake


@pytest.fixture
def client(gh: FakeGitHub, app_key: tuple[str, str]) -> GitHub[Any]:
    return installation_client(gh, app_key[0])
