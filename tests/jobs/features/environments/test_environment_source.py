"""The tree a cached environment is built from: the job's base, whose files its key covers.

The key is computed from the base's `cache_key` files and shared by every job on that base, so
building it from the job's head (where a batch of this job may have changed a file setup
reads) would let one job's commits into the next job's environment.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from jobs.adapters.environments import EnvironmentCache
from jobs.adapters.sandbox import BubblewrapSandbox, SandboxPolicy, bubblewrap_available
from jobs.adapters.workspace import Repository
from jobs.features.environments.build import prepare_job_environment
from jobs.inputs.config import load_config
from tests.kit.records import make_job
from tests.kit.repos import commit_all, git, make_repo

pytestmark = pytest.mark.skipif(not bubblewrap_available(), reason="needs bubblewrap")
CONFIG = """
setup: ["python3 make_env.py"]
validate: ["python3 -c pass"]
allow_commands: [python3]
cache_key: ["requirements.txt"]
"""
# setup copies a tracked file setup reads (not a cache_key file) into what it builds.
MAKE_ENV = "import shutil\nshutil.copy('settings.txt', 'built-from.txt')\n"


@pytest.fixture(autouse=True)
def _python_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", f"{os.path.dirname(sys.executable)}{os.pathsep}{os.environ['PATH']}")


def test_the_environment_is_built_from_the_base_not_from_a_batch_commit(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {".github/stepwise.yml": CONFIG, "make_env.py": MAKE_ENV,
                                         "settings.txt": "base\n", "requirements.txt": "six\n"})
    base = git(repo, "rev-parse", "HEAD")
    git(repo, "checkout", "-q", "-b", "stepwise/issue-7")
    (repo / "settings.txt").write_text("written by a batch\n")
    commit_all(repo, "batch 1")
    head = git(repo, "rev-parse", "HEAD")
    git(repo, "checkout", "-q", "main")
    job = make_job().model_copy(update={"base_sha": base, "head_sha": head,
                                        "config": load_config(CONFIG)})
    cache = EnvironmentCache(tmp_path / "envs", limit_bytes=2**30)
    outcome = prepare_job_environment(job, repository=Repository(repo), cache=cache,
                                      sandbox=BubblewrapSandbox(),
                                      policy=SandboxPolicy(allow_commands=("python3",)))
    assert outcome.failure is None and outcome.environment is not None, outcome
    assert outcome.environment.entries == ("built-from.txt",)
    assert (outcome.environment.tree / "built-from.txt").read_text() == "base\n"
