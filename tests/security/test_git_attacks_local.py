"""Issue 11's attacks on Stepwise's own git calls and editors, in local mode with bubblewrap.

Each scenario is a real attack (tests/security/git_attacks.py) whose payload would write a
marker outside the worktree if it ever ran outside the sandbox. The job must complete, or stop
with a security error naming the refused path; no marker appears and `.git/config` is unchanged.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from bot.demo.scripted_llm import Reply, ScriptedServer
from jobs.adapters.sandbox import BubblewrapSandbox
from jobs.features.environments.record import environment_of
from jobs.inputs.spec import parse_issue_file
from jobs.kernel.job import Job
from jobs.kernel.model import JobStatus
from jobs.local import LocalSession
from tests.kit.llm import settings
from tests.kit.local_e2e import Recorder, show
from tests.kit.repos import git, make_repo
from tests.security import git_attacks as attacks
from tests.security import hostile

pytestmark = hostile.needs_bwrap
NUMBER = 11
KEY_TEXT = "-----BEGIN RSA PRIVATE KEY-----\nMIIEgitAttackKeyMaterial\n-----END RSA PRIVATE KEY-----\n"
OUTSIDE_TEXT = "OLD_NAME = 'a file outside the repository'\n"


@dataclass
class Place:
    root: Path
    workdir: Path
    repo: Path
    targets: attacks.Targets
    outside: Path


@pytest.fixture
def place(outside_tmp: Path) -> Place:
    workdir = outside_tmp / "work"
    repo = workdir / "repos" / "octo" / "repo"
    other = workdir / "repos" / "octo" / "other" / "SECRET.txt"
    other.parent.mkdir(parents=True)
    other.write_text("another installation's secret\n")
    key = outside_tmp / "keys" / "app.pem"
    key.parent.mkdir()
    key.write_text(KEY_TEXT)
    markers = outside_tmp / "markers"
    markers.mkdir()
    outside = outside_tmp / "outside" / "OLD_NAME.py"
    outside.parent.mkdir()
    outside.write_text(OUTSIDE_TEXT)
    targets = attacks.Targets(markers=markers, key=key, other=other,
                              objects=repo / ".git" / "objects")
    return Place(outside_tmp, workdir, repo, targets, outside)


def build(place: Place, scenario: attacks.Scenario) -> None:
    make_repo(place.repo, attacks.repo_files(place.targets, scenario))
    for path, text in scenario.links.items():
        os.symlink(text, place.repo / path)
    if scenario.links:
        git(place.repo, "add", "-A")
        git(place.repo, "commit", "-q", "-m", "links")


def run(place: Place, scenario: attacks.Scenario, session: LocalSession) -> Job:
    session.services.sandbox = BubblewrapSandbox()
    session.services.hidden_paths = (place.workdir, place.targets.key)
    config = place.repo / ".git" / "config"
    before = attacks.digest(config)
    markdown = f"# {scenario.name}\n\n{attacks.issue_block(**scenario.spec)}"
    session.run(parse_issue_file(markdown), yes=True)
    job = session.load()
    attacks.assert_no_marker(place.targets)
    assert attacks.digest(config) == before, config.read_text()
    assert not (place.repo / ".git" / "hooks" / "post-index-change").exists()
    return job


def evidence_text(job: Job) -> str:
    """Every command's output: setup's (in the environment's record), the baseline's, the
    attempts'. A `.git` that setup planted stays in the scratch tree setup ran in: the
    environment keeps what git does not track but never a `.git`, so validation sees none."""
    tails = [c.output_tail for c in environment_of(job).setup] if environment_of(job) else []
    tails += [c.output_tail for c in job.baseline]
    tails += [c.output_tail for b in job.batches for a in b.attempts for c in a.commands]
    return "\n".join(tails)


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    with ScriptedServer() as scripted:
        yield scripted


@pytest.mark.parametrize("index", range(5), ids=[
    "validation-gitfile-fsmonitor", "validation-gitfile-hooks", "setup-dotgit-dir",
    "issue-codemod-gitfile", "issue-codemod-dotgit-dir"])
def test_planted_git_metadata_never_steers_stepwise(place: Place, index: int) -> None:
    scenario = attacks.metadata_scenarios(place.targets)[index]
    build(place, scenario)
    job = run(place, scenario, LocalSession(place.repo, NUMBER, sink=Recorder()))
    assert job.status is JobStatus.COMPLETED, (job.status, job.error, job.gate)
    # The attack really ran in the sandbox (its output is the record's evidence) ...
    seen = evidence_text(job)
    assert "PLANTED" in seen or "SEEN .git dir" in seen, seen
    # ... and what was committed is the edit alone: nothing planted is in the branch.
    assert "NEW_NAME" in show(place.repo, job.branch, "src/app.py")
    files = git(place.repo, "ls-tree", "-r", "--name-only", job.branch).split()
    assert not any(".git/" in f or f.endswith("payload.sh") for f in files), files


@pytest.mark.parametrize("index", range(4), ids=[
    "replace-absolute", "replace-relative-config", "command-absolute", "command-relative-config"])
def test_tracked_symlinks_are_never_followed(place: Place, index: int) -> None:
    marker_config = f'[core]\n\tfsmonitor = "touch {place.targets.markers}/ran-link"'
    scenario = attacks.link_scenarios(place.outside, place.targets.key, marker_config)[index]
    build(place, scenario)
    job = run(place, scenario, LocalSession(place.repo, NUMBER, sink=Recorder()))
    attacks.assert_completed_or_refused(job, scenario.links)
    assert place.outside.read_text() == OUTSIDE_TEXT
    for path, text in scenario.links.items():
        assert os.readlink(place.repo / path) == text
        if job.status is JobStatus.COMPLETED:  # the link itself was left as it was
            assert show(place.repo, job.branch, path) == text


def test_the_model_is_never_sent_what_a_link_points_at(place: Place,
                                                       server: ScriptedServer) -> None:
    scenario = attacks.link_scenarios(place.outside, place.targets.key, "")[4]
    build(place, scenario)
    server.script = [Reply(attacks.rename_answer())] * 4
    job = run(place, scenario, LocalSession(place.repo, NUMBER, sink=Recorder(),
                                            llm=settings(server)))
    attacks.assert_completed_or_refused(job, scenario.links)
    sent = "\n".join(request.user_text for request in server.requests)
    assert "MIIEgitAttackKeyMaterial" not in sent
    assert "repositoryformatversion" not in sent
