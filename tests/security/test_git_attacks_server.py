"""Issue 11's attacks through the App: signed webhooks, the worker, the mirror and bubblewrap.

The same payloads as in local mode (tests/security/git_attacks.py), the `llm` links included.
In server mode a payload that escaped would copy the App's private key and another
installation's clone; the marker directory must stay empty and the bare clone's config
unchanged.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest
import redis

from bot.demo.scripted_llm import Reply, ScriptedServer
from bot.server.context import ServerContext
from bot.server.handlers import handlers
from bot.server.worker import install_handlers
from bot.settings import Settings
from bot.web.app import create_app
from jobs.adapters.sandbox import BubblewrapSandbox
from jobs.features.environments.record import environment_of
from jobs.kernel.job import Job
from jobs.kernel.model import Gate, JobStatus
from tests.bot.conftest import NAME, OWNER, REPO, SECRET, World, served
from tests.kit.github import FakeGitHub
from tests.kit.github_rate_limits import WORLD_WRITE_BURST
from tests.security import git_attacks as attacks
from tests.security import hostile

pytestmark = hostile.needs_bwrap


@dataclass
class App:
    root: Path
    gh: FakeGitHub
    settings: Settings
    connection: redis.Redis
    targets: attacks.Targets
    outside: Path

    @property
    def mirror(self) -> Path:
        return self.settings.workdir / "repos" / OWNER / f"{NAME}.git"


@pytest.fixture
def app(outside_tmp: Path, tmp_path: Path, redis_url: str) -> Iterator[App]:
    workdir, key = outside_tmp / "work", outside_tmp / "keys" / "app.pem"
    other = workdir / "repos" / "other-org" / "private.git" / "SECRET"
    other.parent.mkdir(parents=True)
    other.write_text("another installation's secret\n")
    markers, outside = outside_tmp / "markers", outside_tmp / "outside" / "OLD_NAME.py"
    markers.mkdir()
    outside.parent.mkdir()
    outside.write_text("OLD_NAME = 'outside'\n")
    connection = redis.Redis.from_url(redis_url)
    connection.flushdb()
    with FakeGitHub(root=tmp_path / "github") as gh:
        key.parent.mkdir()
        key.write_text(gh.private_key_pem)
        settings = Settings(app_id=gh.app_id, private_key_path=key, webhook_secret=SECRET,
                            redis_url=redis_url, github_api_url=gh.base_url, workdir=workdir,
                            app_slug="stepwise", github_write_burst=WORLD_WRITE_BURST)
        targets = attacks.Targets(markers=markers, key=key, other=other,
                                  objects=workdir / "repos" / OWNER / f"{NAME}.git" / "objects")
        yield App(outside_tmp, gh, settings, connection, targets, outside)


def commit_links(bare: Path, links: Mapping[str, str]) -> None:
    """Add tracked symlinks (mode 120000) to `main` of the fake's bare repository."""
    def git(*args: str, data: bytes | None = None, env: dict[str, str] | None = None) -> str:
        return subprocess.run(["git", *args], cwd=bare, input=data, capture_output=True,
                              check=True, env={**os.environ, **(env or {})}).stdout.decode().strip()
    with tempfile.TemporaryDirectory() as tmp:
        env = {"GIT_INDEX_FILE": str(Path(tmp) / "index"), "GIT_AUTHOR_NAME": "eve",
               "GIT_AUTHOR_EMAIL": "eve@example.invalid", "GIT_COMMITTER_NAME": "eve",
               "GIT_COMMITTER_EMAIL": "eve@example.invalid"}
        parent = git("rev-parse", "refs/heads/main")
        git("read-tree", parent, env=env)
        for path, text in links.items():
            blob = git("hash-object", "-w", "--stdin", data=text.encode())
            git("update-index", "--add", "--cacheinfo", f"120000,{blob},{path}", env=env)
        tree = git("write-tree", env=env)
        commit = git("commit-tree", tree, "-p", parent, "-m", "links", env=env)
        git("update-ref", "refs/heads/main", commit, parent)


def run_job(app: App, scenario: attacks.Scenario) -> Job:
    app.gh.add_repo(OWNER, NAME, attacks.repo_files(app.targets, scenario))
    if scenario.links:
        commit_links(app.gh.repos[REPO].path, scenario.links)
    app.gh.add_issue(REPO, scenario.name, attacks.issue_block(**scenario.spec), user="maria")
    app.gh.set_permission(REPO, "maria", "maintain")
    ctx = ServerContext.from_settings(app.settings, connection=app.connection,
                                      sandbox=BubblewrapSandbox())
    install_handlers(handlers(ctx))
    with served(create_app(app.settings, app.connection)) as url:
        world = World(app.gh, url, app.connection, ctx)
        world.send("issues.labeled", issue_number=1, sender="maria")
        world.work()
        assert world.job().gate.kind is Gate.PLAN, world.job().gate
        config_before = attacks.digest(app.mirror / "config")
        world.comment("/stepwise approve", by="maria")
        world.work()
        job: Job = world.job()
    attacks.assert_no_marker(app.targets)
    assert attacks.digest(app.mirror / "config") == config_before
    assert not (app.mirror / "hooks" / "post-index-change").exists()
    return job


@pytest.mark.parametrize("index", range(5), ids=[
    "validation-gitfile-fsmonitor", "validation-gitfile-hooks", "setup-dotgit-dir",
    "issue-codemod-gitfile", "issue-codemod-dotgit-dir"])
def test_planted_git_metadata_never_reaches_the_key_or_other_clones(app: App,
                                                                    index: int) -> None:
    scenario = attacks.metadata_scenarios(app.targets)[index]
    job = run_job(app, scenario)
    assert job.status is JobStatus.COMPLETED, (job.status, job.error, job.gate)
    tails = [c.output_tail for b in job.batches for a in b.attempts for c in a.commands]
    tails += [c.output_tail for c in job.baseline]
    tails += [c.output_tail for c in environment_of(job).setup] if environment_of(job) else []
    assert any("PLANTED" in t or "SEEN .git dir" in t for t in tails), tails
    branch = app.gh.read_file(app.gh.repos[REPO], "src/app.py", ref=job.branch) or ""
    assert "NEW_NAME" in branch


@pytest.mark.parametrize("index", range(4), ids=[
    "replace-absolute", "replace-relative-config", "command-absolute", "command-relative-config"])
def test_tracked_symlinks_are_never_followed_by_the_worker(app: App, index: int) -> None:
    marker_config = f'[core]\n\tfsmonitor = "touch {app.targets.markers}/ran-link"'
    scenario = attacks.link_scenarios(app.outside, app.targets.key, marker_config)[index]
    job = run_job(app, scenario)
    attacks.assert_completed_or_refused(job, scenario.links)
    assert app.outside.read_text() == "OLD_NAME = 'outside'\n"


def test_the_worker_never_sends_the_model_what_a_link_points_at(
    app: App, monkeypatch: pytest.MonkeyPatch,
) -> None:
    with ScriptedServer() as server:
        server.script = [Reply(attacks.rename_answer())] * 4
        monkeypatch.setenv("STEPWISE_LLM_BASE_URL", server.url)
        monkeypatch.setenv("STEPWISE_LLM_MODEL", "scripted-model")
        monkeypatch.setenv("STEPWISE_LLM_EDIT_FORMAT", "diff")
        monkeypatch.setenv("STEPWISE_LLM_API_KEY", "sk-test-git-attacks-0123456789")
        scenario = attacks.link_scenarios(app.outside, app.targets.key, "")[4]
        job = run_job(app, scenario)
        attacks.assert_completed_or_refused(job, scenario.links)
        sent = "\n".join(request.user_text for request in server.requests)
    assert "PRIVATE KEY" not in sent and "repositoryformatversion" not in sent
