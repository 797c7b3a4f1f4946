"""Fixtures of the sandbox tests: the venv's python on PATH with fresh sandbox caches, a
sandbox of each kind (plain, and bubblewrap where usable), and a scratch directory outside /tmp."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from jobs.adapters import sandbox as sb
from jobs.adapters.sandbox import BubblewrapSandbox, PlainSandbox, Sandbox
from tests.jobs.adapters.sandbox_kit import needs_bwrap


@pytest.fixture
def python_on_path(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    # The test venv's python3 must be what `python3` resolves to inside the command.
    here = os.path.dirname(sys.executable)
    monkeypatch.setenv("PATH", here + os.pathsep + os.environ.get("PATH", os.defpath))
    sb.reset_sandbox_caches()
    yield
    sb.reset_sandbox_caches()


@pytest.fixture(params=["plain", pytest.param("bwrap", marks=needs_bwrap)])
def box(request: pytest.FixtureRequest) -> Sandbox:
    return PlainSandbox() if request.param == "plain" else BubblewrapSandbox()


@pytest.fixture
def outside_tmp() -> Iterator[Path]:
    # A directory outside /tmp, so the sandbox's private /tmp does not already hide it.
    path = Path(tempfile.mkdtemp(prefix="stepwise-sandbox-test-", dir="/var/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)
