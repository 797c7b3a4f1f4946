"""The environment key on a real checkout in local mode: PATH noise (another order, directories
holding programs setup does not run) reuses the environment; a changed input rebuilds it and
the plan says which input changed."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from jobs.adapters.sandbox import bubblewrap_available
from jobs.features.environments.record import environment_of
from jobs.ports import Publication
from tests.kit.local_e2e import Recorder, assert_exit, build_sample, config_text, issue, load_job
from tests.kit.local_e2e import session as local_session
from tests.kit.repos import commit_all

pytestmark = pytest.mark.skipif(not bubblewrap_available(), reason="needs bubblewrap")

SETUP = ("python -c \"import pathlib; p = pathlib.Path('built'); p.mkdir(); "
         "(p / 'stamp.txt').write_text('ok')\"")


def plan_of(repo: Path, number: int) -> str:
    sink = Recorder()
    assert_exit(local_session(repo, number, sink).run(issue(), yes=False), 3)  # waits at the plan gate
    return "\n".join(sink.texts(Publication.PLAN))


def noise_dir(tmp_path: Path) -> Path:
    """A directory of programs setup never runs (another node, npm and python3)."""
    noise = tmp_path / "noise-bin"
    noise.mkdir()
    for name in ("node", "npm", "python3", "make"):
        program = noise / name
        program.write_text("#!/bin/sh\nexit 0\n")
        program.chmod(program.stat().st_mode | stat.S_IXUSR)
    return noise


def test_path_noise_reuses_the_environment_and_a_rebuild_says_why(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = build_sample(tmp_path / "repo", config=config_text(
        setup=[SETUP], cache_key=["requirements.txt"]))
    (repo / "requirements.txt").write_text("six==1.16.0\n")
    commit_all(repo, "requirements")

    first = plan_of(repo, 1)
    built = environment_of(load_job(repo, 1))
    assert built is not None and not built.from_cache and built.rebuilt_because == []
    assert "environment built for this job" in first and "rebuilt because" not in first

    # Launched through another wrapper: other programs first on PATH, the rest repeated.
    path = os.environ["PATH"].split(os.pathsep)
    monkeypatch.setenv("PATH", os.pathsep.join([str(noise_dir(tmp_path)), *path, *path[:2]]))
    plan_of(repo, 2)
    reused = environment_of(load_job(repo, 2))
    assert reused is not None and reused.from_cache and reused.key == built.key

    # A changed input of the key: a rebuild, and the plan names what changed.
    (repo / "requirements.txt").write_text("six==1.17.0\n")
    commit_all(repo, "bump six")
    third = plan_of(repo, 3)
    rebuilt = environment_of(load_job(repo, 3))
    assert rebuilt is not None and not rebuilt.from_cache and rebuilt.key != built.key
    assert rebuilt.rebuilt_because == ["`requirements.txt` (a `cache_key` file)"]
    assert "Environment rebuilt because of a change to `requirements.txt` (a `cache_key` " \
        "file)" in third


# Counts its runs in the tools' cache (XDG_CACHE_HOME), checks pip's and pytest's point there
# too, and that the environment setup built stays read-only.
COUNTING = ("python -c \"import os, pathlib; "
            "runs = pathlib.Path(os.environ['XDG_CACHE_HOME']) / 'runs'; "
            "before = int(runs.read_text()) if runs.exists() else 0; "
            "runs.parent.mkdir(parents=True, exist_ok=True); runs.write_text(str(before + 1)); "
            "assert os.environ['PIP_CACHE_DIR'].startswith('/tmp/stepwise/cache/'); "
            "assert 'cache_dir=/tmp/stepwise/cache/pytest' in os.environ['PYTEST_ADDOPTS']; "
            "ro = 'writable'\ntry: pathlib.Path('built/stamp.txt').write_text('x')\n"
            "except OSError: ro = 'read-only'\nprint('runs before', before, 'env', ro)\"")


def test_tool_caches_are_writable_and_kept_between_commands_and_jobs(tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo", config=config_text(
        setup=[SETUP], cache_key=["requirements.txt"],
        validate=[COUNTING, "python -m unittest discover -s tests -q"]))
    (repo / "requirements.txt").write_text("six==1.16.0\n")
    commit_all(repo, "requirements")
    assert_exit(local_session(repo, 1).run(issue(), yes=True), 0)
    first = load_job(repo, 1)
    said = [first.baseline[0].output_tail] + [
        b.attempts[-1].commands[0].output_tail for b in first.batches]
    assert said == [f"runs before {n} env read-only" for n in range(len(said))]

    # The next job with the same environment key finds the cache as the last one left it.
    assert_exit(local_session(repo, 2).run(issue(), yes=True), 0)
    second = load_job(repo, 2)
    assert environment_of(second) is not None and environment_of(second).from_cache
    runs = second.batches[0].attempts[-1].commands[0].output_tail
    assert runs == f"runs before {len(said)} env read-only"
