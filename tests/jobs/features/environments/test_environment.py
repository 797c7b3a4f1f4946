"""Building and reusing a job environment with real setup commands in real bubblewrap."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from jobs.adapters.environments import EnvironmentCache
from jobs.adapters.sandbox import (
    BubblewrapSandbox,
    PlainSandbox,
    Sandbox,
    SandboxPolicy,
    bubblewrap_available,
)
from jobs.features.environments.build import ensure_environment, job_environment_key
from jobs.inputs.config import load_config

needs_bwrap = pytest.mark.skipif(not bubblewrap_available(), reason="needs bubblewrap")

# setup makes a program in .venv/bin and a generated file; validation runs the program by name.
MAKE_ENV = """\
import os
os.makedirs(".venv/bin")
with open(".venv/bin/greet", "w") as tool:
    tool.write("#!/bin/sh\\necho hello from the environment\\n")
os.chmod(".venv/bin/greet", 0o755)
open("generated.txt", "w").write("made by setup")
open("app.py", "a").write("# setup touched a tracked file\\n")
"""
TRACKED = {"app.py", "requirements.txt", "make_env.py"}
CONFIG = """
setup: ["python3 make_env.py"]
validate: ["greet"]
allow_commands: [python3, greet, cat]
cache_key: ["requirements*.txt"]
"""


@pytest.fixture(autouse=True)
def _python_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", f"{os.path.dirname(sys.executable)}{os.pathsep}{os.environ['PATH']}")


@pytest.fixture
def worktree(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "wt"
    path.mkdir()
    (path / "app.py").write_text("print('app')\n")
    (path / "requirements.txt").write_text("six\n")
    (path / "make_env.py").write_text(MAKE_ENV)
    yield path


def untracked(worktree: Path) -> list[str]:
    return sorted(name + ("/" if (worktree / name).is_dir() else "")
                  for name in os.listdir(worktree) if name not in TRACKED)


def read(worktree: Path):  # type: ignore[no-untyped-def]
    return lambda paths: {path: (worktree / path).read_text() for path in paths}


@pytest.mark.parametrize("box", [pytest.param("bwrap", marks=needs_bwrap), "plain"])
def test_setup_builds_once_and_later_commands_see_it_read_only(
        box: str, worktree: Path, tmp_path: Path) -> None:
    sandbox: Sandbox = BubblewrapSandbox() if box == "bwrap" else PlainSandbox()
    config = load_config(CONFIG)
    cache = EnvironmentCache(tmp_path / "envs", limit_bytes=10**9)
    key = job_environment_key(config, tracked=sorted(TRACKED), read=read(worktree))
    policy = SandboxPolicy(allow_commands=tuple(config.allow_commands))
    built = ensure_environment(config=config, key=key, cache=cache, sandbox=sandbox,
                               policy=policy, worktree=worktree,
                               untracked=lambda: untracked(worktree))
    assert built.failure is None and built.environment is not None
    env = built.environment
    assert not env.from_cache and [e.exit_code for e in built.evidence] == [0]
    assert set(env.entries) == {".venv", "generated.txt"}
    assert not (worktree / ".venv").exists() and not (worktree / "generated.txt").exists()

    again = ensure_environment(config=config, key=key, cache=cache, sandbox=sandbox,
                               policy=policy, worktree=worktree,
                               untracked=lambda: untracked(worktree))
    assert again.environment is not None and again.environment.from_cache
    assert again.evidence == ()  # nothing ran

    with_env = SandboxPolicy(allow_commands=tuple(config.allow_commands), environment=env)
    ran = sandbox.run(["greet"], cwd=worktree, policy=with_env)
    assert ran.exit_code == 0 and ran.output_tail == "hello from the environment"
    shown = sandbox.run(["cat", "generated.txt"], cwd=worktree, policy=with_env)
    assert shown.output_tail == "made by setup"
    if box == "bwrap":  # read-only: no batch can change what the next job reuses
        code = "open('.venv/bin/greet', 'w').write('poisoned')"
        write = sandbox.run(["python3", "-c", code], cwd=worktree, policy=with_env)
        assert write.exit_code != 0 and "Read-only" in write.output_tail
    assert (env.tree / ".venv" / "bin" / "greet").read_text().startswith("#!/bin/sh")
    assert sorted(os.listdir(worktree)) == sorted(TRACKED)  # no stubs left


def test_the_key_follows_the_cache_key_files(worktree: Path) -> None:
    config = load_config(CONFIG)
    first = job_environment_key(config, tracked=sorted(TRACKED), read=read(worktree))
    (worktree / "app.py").write_text("changed, but not a cache_key file\n")
    assert job_environment_key(config, tracked=sorted(TRACKED), read=read(worktree)) == first
    (worktree / "requirements.txt").write_text("six==1.17\n")
    assert job_environment_key(config, tracked=sorted(TRACKED), read=read(worktree)) != first
    assert job_environment_key(config, tracked=sorted(TRACKED), read=read(worktree),
                               place="/elsewhere") != first


@needs_bwrap
def test_a_failing_setup_keeps_nothing(worktree: Path, tmp_path: Path) -> None:
    (worktree / "make_env.py").write_text("open('half', 'w')\nraise SystemExit(3)\n")
    config = load_config('setup: ["python3 make_env.py"]\nallow_commands: [python3]\nvalidate: []')
    cache = EnvironmentCache(tmp_path / "envs", limit_bytes=10**9)
    outcome = ensure_environment(config=config, key="k", cache=cache,
                                 sandbox=BubblewrapSandbox(),
                                 policy=SandboxPolicy(allow_commands=("python3",)),
                                 worktree=worktree, untracked=lambda: untracked(worktree))
    assert outcome.environment is None and outcome.failure is not None
    assert outcome.failure.exit_code == 3
    assert cache.get("k") is None
