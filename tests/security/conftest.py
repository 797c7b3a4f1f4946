"""Fixtures for the security tests: the App `world` (re-exported), and a server world whose
repository is the hostile one, with the App key in a file and the workdir outside /tmp."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import redis

from bot.server.context import ServerContext
from bot.server.handlers import handlers
from bot.server.worker import install_handlers
from bot.settings import Settings
from bot.web.app import create_app
from jobs.adapters.sandbox import BubblewrapSandbox, reset_sandbox_caches
from tests.bot.conftest import NAME, OWNER, REPO, SECRET, World, served, world
from tests.kit.github import FakeGitHub
from tests.kit.github_rate_limits import WORLD_WRITE_BURST
from tests.security import hostile

__all__ = ["HostileServer", "hostile_server", "outside_tmp", "world"]

@pytest.fixture
def outside_tmp(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A directory under /var/tmp (the sandbox's private /tmp would hide /tmp by itself), with
    the venv's python first on PATH so that `python` in the sandbox is the one with pytest."""
    base = Path("/var/tmp")
    if not os.access(base, os.W_OK):
        pytest.skip("/var/tmp is not writable")
    monkeypatch.setenv("PATH", os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"])
    reset_sandbox_caches()
    root = Path(tempfile.mkdtemp(prefix="stepwise-security-", dir=base))
    yield root
    shutil.rmtree(root, ignore_errors=True)
    reset_sandbox_caches()


@dataclass
class HostileServer:
    world: World
    targets: hostile.Targets
    key: Path
    workdir: Path


@pytest.fixture
def hostile_server(outside_tmp: Path, tmp_path: Path, redis_url: str,
                   monkeypatch: pytest.MonkeyPatch) -> Iterator[HostileServer]:
    """The App over real HTTP with STEPWISE_PRIVATE_KEY_PATH and STEPWISE_WORKDIR outside /tmp;
    repository octo-org/widgets is the hostile one, and issue #1 asks for its codemod."""
    token, marker = hostile.new_token(), f"env-marker-{uuid.uuid4().hex}"
    monkeypatch.setenv("GITHUB_TOKEN", token)
    monkeypatch.setenv("STEPWISE_WEBHOOK_SECRET", marker)
    workdir, key = outside_tmp / "work", outside_tmp / "keys" / "app.pem"
    mirror = workdir / "repos" / OWNER / f"{NAME}.git"
    other = workdir / "repos" / OWNER / "other.git"
    (outside_tmp / "checkout").mkdir()
    tag = f"hostile-daemon-{uuid.uuid4().hex}"
    connection = redis.Redis.from_url(redis_url)
    connection.flushdb()
    try:
        with hostile.victim_process(marker, token) as victim, \
                FakeGitHub(root=tmp_path / "github") as gh:
            key.parent.mkdir()
            key.write_text(gh.private_key_pem)
            targets = hostile.Targets(
                key_path=str(key), other_clone=str(other),
                other_secret=str(hostile.make_other_clone(other, marker)),
                git_config=str(mirror / "config"),
                redis_port=int(urlsplit(redis_url).port or 6379), outside_host="10.255.255.1",
                victim_pid=victim, env_marker=marker, token=token,
                pem_body=hostile.FAKE_PEM_BODY,
                checkout_file=str(outside_tmp / "checkout" / f"pwned-{tag}"),
                home_file=str(Path.home() / f"pwned-{tag}"),
                clone_file=str(mirror / f"pwned-{tag}"), daemon_tag=tag,
            )
            gh.add_repo(OWNER, NAME, hostile.repo_files(targets))
            gh.add_issue(REPO, "Rename OLD_NAME to NEW_NAME", hostile.issue_body(), user="maria")
            gh.set_permission(REPO, "maria", "maintain")
            settings = Settings(app_id=gh.app_id, private_key_path=key, webhook_secret=SECRET,
                                redis_url=redis_url, github_api_url=gh.base_url,
                                workdir=workdir, app_slug="stepwise",
                                github_write_burst=WORLD_WRITE_BURST)
            ctx = ServerContext.from_settings(settings, connection=connection,
                                              sandbox=BubblewrapSandbox())
            install_handlers(handlers(ctx))
            with served(create_app(settings, connection)) as url:
                yield HostileServer(World(gh, url, connection, ctx), targets, key, workdir)
    finally:
        hostile.kill_all(hostile.processes_with(tag))
        Path(Path.home() / f"pwned-{tag}").unlink(missing_ok=True)
