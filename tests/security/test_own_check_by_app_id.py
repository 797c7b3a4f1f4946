"""Stepwise's own check runs are told by the App's id, never by a name another App can take:
another App's failing run named `Stepwise` is a foreign check that fails CI (and a protection
pinned to it is waited for), while Stepwise's own runs never count, whatever they say. Through
the real githubkit client against the loopback fake GitHub, and end to end through the App."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from bot.github.app import GitHubApp
from bot.github.client import Installation
from bot.github.forge import GitHubForge
from jobs.decisions.ci import CiState, CiVerdict
from jobs.features.ci.parts import CI_FAILED
from jobs.features.ci.rules import ci_verdict
from jobs.features.ci.wait import requirement
from jobs.kernel.job import Job
from jobs.kernel.model import JobStatus
from tests.bot.ci_world import approved, ci_world, player, waited_sha
from tests.bot.conftest import World
from tests.kit.github import FakeGitHub
from tests.kit.github_ci import CiPlayer
from tests.kit.github_ci_model import AppRef
from tests.kit.github_ci_ops import own_app
from tests.kit.records import make_job

__all__ = ["ci_world"]  # the fixture
OWNER, NAME = "octo", "widgets"
REPO = f"{OWNER}/{NAME}"
IMPOSTOR = AppRef(9_002, "totally-not-stepwise", "Stepwise")  # another App, our display name


@pytest.fixture
def gh(tmp_path: Path) -> Iterator[FakeGitHub]:
    with FakeGitHub(root=tmp_path / "gh") as fake:
        fake.add_repo(OWNER, NAME, {"calc/a.py": "x = 1\n"})
        yield fake


@pytest.fixture
def client(gh: FakeGitHub) -> Installation:
    return GitHubApp(app_id=gh.app_id, private_key=gh.private_key_pem, base_url=gh.base_url,
                     timeout=10).client(1)


@pytest.fixture
def job() -> Job:
    job = make_job()
    job.repo = REPO
    return job


def _verdict(client: Installation, job: Job, sha: str) -> CiVerdict:
    report = GitHubForge(client, REPO).ci_report(job, sha)
    assert report is not None
    now = job.created_at + timedelta(minutes=1)
    return ci_verdict(requirement(job, report), report.observed, waiting_since=job.created_at,
                      now=now, timeout=timedelta(hours=1))


def test_another_app_s_failing_run_named_stepwise_fails_ci(gh: FakeGitHub, client: Installation,
                                                           job: Job) -> None:
    sha = gh.branch_head(REPO, "main")
    assert sha is not None
    ci = CiPlayer(gh, gh.repos[REPO])
    ci.app_check(sha, "Stepwise", None, app=own_app(gh), webhooks=False)  # ours, at a gate
    ci.report(sha, "tests", "success", webhooks=False)
    ci.app_check(sha, "Stepwise", "failure", app=IMPOSTOR, webhooks=False)
    ci.app_check(sha, "Stepwise / batch 1", "failure", app=IMPOSTOR, webhooks=False)
    found = _verdict(client, job, sha)
    assert found.state is CiState.FAILED
    assert sorted((c.name, c.app_slug) for c in found.failing) == [
        ("Stepwise", IMPOSTOR.slug), ("Stepwise / batch 1", IMPOSTOR.slug)]


def test_stepwise_s_own_runs_never_count(gh: FakeGitHub, client: Installation, job: Job) -> None:
    sha = gh.branch_head(REPO, "main")
    assert sha is not None
    ci = CiPlayer(gh, gh.repos[REPO])
    ci.report(sha, "tests", "success", webhooks=False)
    for name in ("Stepwise", "Stepwise / batch 1", "lint"):  # even under a foreign-looking name
        ci.app_check(sha, name, "failure", app=own_app(gh), webhooks=False)
    found = _verdict(client, job, sha)
    assert found.state is CiState.PASSED and [c.name for c in found.checks] == ["tests"]


def test_a_protection_pinned_to_another_app_s_stepwise_is_waited_for(
        gh: FakeGitHub, client: Installation, job: Job) -> None:
    sha = gh.branch_head(REPO, "main")
    assert sha is not None
    CiPlayer(gh, gh.repos[REPO]).protect(
        "main", ["Stepwise", "Stepwise / batch 1", "tests"],
        app_ids={"Stepwise": IMPOSTOR.id, "Stepwise / batch 1": gh.app_id})
    report = GitHubForge(client, REPO).ci_report(job, sha)
    assert report is not None and report.protected == ("Stepwise", "tests")
    assert report.own_app_id == gh.app_id


@pytest.mark.slow
def test_through_the_app_an_impostor_s_red_stepwise_check_opens_ci_failed(
        ci_world: World) -> None:
    world, ci = ci_world, player(ci_world)
    sha = waited_sha(approved(world))  # our own `Stepwise` run is in progress on it
    ci.report(sha, "tests", "success")
    ci.app_check(sha, "Stepwise", "failure", app=IMPOSTOR)
    world.work()
    job = world.job()
    assert job.status is JobStatus.AWAITING_HUMAN and job.gate is not None
    assert job.gate.kind == CI_FAILED, job.gate.kind
    assert "Stepwise" in (job.gate.reason or "")
