"""Job environments end to end in local mode, on repositories that need the network to validate.

A Python package whose tests import `six` (from PyPI) and the package itself (an editable
install), and a Node package whose test needs `is-number` (from the npm registry, `npm ci`):
`setup` installs them once, through the egress proxy, in real bubblewrap; every batch is
validated against that environment read-only; the next job with the same key reuses it without
running setup (so without the network); a changed `cache_key` file builds it again.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from jobs.adapters.sandbox import bubblewrap_available
from jobs.engine.engine import Outcome
from jobs.features.environments.record import environment_of
from jobs.inputs.spec import parse_issue_file
from jobs.kernel.job import Job
from jobs.kernel.model import BatchStatus
from jobs.local import LocalSession
from jobs.ports import Publication
from tests.kit.env_repos import NODE_ISSUE, PY_ISSUE, PYPROJECT, node_files, python_files
from tests.kit.local_e2e import Recorder
from tests.kit.repos import commit_all, git, make_repo

pytestmark = [pytest.mark.skipif(not bubblewrap_available(), reason="needs bubblewrap"),
              pytest.mark.slow]  # real PyPI and npm installs: tens of seconds


@pytest.fixture(autouse=True)
def _python_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", f"{os.path.dirname(sys.executable)}{os.pathsep}{os.environ['PATH']}")


def run_job(repo: Path, number: int, issue: str = PY_ISSUE) -> tuple[Outcome, Job]:
    sink = Recorder()
    session = LocalSession(repo, number, sink=sink)
    outcome = session.run(parse_issue_file(issue), yes=True)
    job = session.store.load(number)
    assert job is not None
    assert environment_of(job) is not None
    how = "reused from the cache" if environment_of(job).from_cache else "built for this job"
    assert f"; environment {how} (key `{environment_of(job).key[:12]}`)" in \
        "\n".join(sink.texts(Publication.PLAN))
    return outcome, job


@pytest.fixture
def python_repo(tmp_path: Path) -> Iterator[Path]:
    yield make_repo(tmp_path / "shapes", python_files())


def test_a_python_package_validates_against_its_installed_environment(python_repo: Path) -> None:
    outcome, job = run_job(python_repo, 1)
    assert outcome.exit_code == 0, outcome.message
    env = environment_of(job)
    assert env is not None and not env.from_cache
    assert [c.argv[0] for c in env.setup] == ["python", "pip"]
    assert "pypi.org:443 allowed" in env.setup[1].egress  # pip went through the egress proxy
    assert all(c.exit_code == 0 for c in env.setup), env.setup
    assert ".venv" in env.entries
    assert [b.status for b in job.batches] == [BatchStatus.COMPLETED] * 2
    for batch in job.batches:
        validation = batch.attempts[-1].commands
        assert validation and validation[-1].argv == ["pytest", "-q"]
        assert "1 passed" in validation[-1].output_tail
    # Nothing of the environment is in a batch commit.
    changed = git(python_repo, "diff", "--name-only", job.base_sha, job.branch).splitlines()
    assert not any(path.startswith(".venv") or "egg-info" in path for path in changed)

    # The next job with the same key reuses it: setup does not run, no network is used.
    second, again = run_job(python_repo, 2)
    assert second.exit_code == 0, second.message
    assert environment_of(again) is not None and environment_of(again).from_cache
    assert environment_of(again).key == env.key and environment_of(again).setup == []

    # A change to a cache_key file builds it again.
    (python_repo / "pyproject.toml").write_text(PYPROJECT.replace("0.1.0", "0.2.0"))
    commit_all(python_repo, "bump")
    third, rebuilt = run_job(python_repo, 3)
    assert third.exit_code == 0, third.message
    assert environment_of(rebuilt) is not None and environment_of(rebuilt).key != env.key
    assert not environment_of(rebuilt).from_cache and len(environment_of(rebuilt).setup) == 2


def test_a_node_package_installs_with_npm_ci_once(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "counts", node_files())
    outcome, job = run_job(repo, 1, NODE_ISSUE)
    assert outcome.exit_code == 0, outcome.message
    assert environment_of(job) is not None and "node_modules" in environment_of(job).entries
    assert environment_of(job).setup[0].exit_code == 0
    assert "ok" in job.batches[0].attempts[-1].commands[-1].output_tail
    _, again = run_job(repo, 2, NODE_ISSUE)
    assert environment_of(again) is not None and environment_of(again).from_cache
