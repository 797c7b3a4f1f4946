"""Environment keys cannot be poisoned: what `setup` built for a contributor's branch (a planted
`.pth` file that runs in every later Python) is never reused for the default branch, even when
the `cache_key` files are identical; without `cache_key` the base commit is in the key."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from jobs.adapters.environments import EnvironmentCache
from jobs.adapters.sandbox import PlainSandbox, SandboxPolicy
from jobs.features.environments.build import ensure_environment, job_environment_key
from jobs.inputs.config import load_config

CONFIG = """
setup: ["python3 make_env.py"]
validate: ["python3 -c pass"]
allow_commands: [python3]
cache_key: ["requirements*.txt"]
"""
HONEST = "import os\nos.makedirs('.venv/lib', exist_ok=True)\n"
POISON = HONEST + "open('.venv/lib/stepwise-poison.pth', 'w').write('import os; os.system(\"x\")')\n"


@pytest.fixture(autouse=True)
def _python_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", f"{os.path.dirname(sys.executable)}{os.pathsep}{os.environ['PATH']}")


def _checkout(path: Path, make_env: str) -> Path:
    path.mkdir()
    (path / "requirements.txt").write_text("six\n")  # the same on both branches
    (path / "make_env.py").write_text(make_env)
    return path


def _build(cache: EnvironmentCache, worktree: Path, *, ref: str, commit: str):  # type: ignore[no-untyped-def]
    config = load_config(CONFIG)
    tracked = ["make_env.py", "requirements.txt"]
    key = job_environment_key(config, tracked=tracked, ref=ref, commit=commit,
                              read=lambda paths: {p: (worktree / p).read_text() for p in paths})
    outcome = ensure_environment(
        config=config, key=key, cache=cache, sandbox=PlainSandbox(),
        policy=SandboxPolicy(allow_commands=("python3",)), worktree=worktree,
        untracked=lambda: [".venv/"])
    assert outcome.environment is not None, outcome.failure
    return key, outcome.environment


def test_a_contributors_environment_never_serves_the_default_branch(tmp_path: Path) -> None:
    cache = EnvironmentCache(tmp_path / "envs", limit_bytes=10**9)
    contrib_key, contrib = _build(cache, _checkout(tmp_path / "contrib", POISON),
                                  ref="contributor/feature", commit="c" * 40)
    assert (contrib.tree / ".venv" / "lib" / "stepwise-poison.pth").exists()
    main_key, main = _build(cache, _checkout(tmp_path / "main", HONEST), ref="main",
                            commit="m" * 40)
    assert main_key != contrib_key and not main.from_cache
    assert not (main.tree / ".venv" / "lib" / "stepwise-poison.pth").exists()


def test_without_cache_key_the_base_commit_is_in_the_key(tmp_path: Path) -> None:
    config = load_config(CONFIG.replace('cache_key: ["requirements*.txt"]', ""))
    keys = {job_environment_key(config, tracked=[], read=lambda paths: {}, ref="main",
                                commit=commit) for commit in ("a" * 40, "b" * 40)}
    assert len(keys) == 2
    with_files = load_config(CONFIG)
    same = {job_environment_key(with_files, tracked=[], read=lambda paths: {}, ref="main",
                                commit=commit) for commit in ("a" * 40, "b" * 40)}
    assert len(same) == 1  # cache_key names what setup reads: reuse across commits stays
