"""Versions from git on a real repository: a package versioned by setuptools-scm, whose `.git`
the sandbox hides, gets its version from the base commit's nearest tag through
`SETUPTOOLS_SCM_PRETEND_VERSION_FOR_<NAME>`, in setup and validation, and the plan says so."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from jobs.adapters.sandbox import bubblewrap_available
from jobs.ports import Publication
from tests.kit.local_e2e import VALIDATE, Recorder, config_text, issue, sample_files, session
from tests.kit.repos import commit_all, git, make_repo

PYPROJECT = """[build-system]
requires = ["setuptools>=64", "setuptools-scm>=8"]
build-backend = "setuptools.build_meta"

[project]
name = "calc-demo"
dynamic = ["version"]

[tool.setuptools]
packages = ["calc"]

[tool.setuptools_scm]
"""
# A real setuptools build step: the setuptools-scm plugin must find the version, or it fails.
BUILD_VERSION = 'python -c "import setuptools; setuptools.setup()" --version'
SEES_VARIABLE = ("python -c \"import os, sys; "
                 "sys.exit(0 if os.environ.get('SETUPTOOLS_SCM_PRETEND_VERSION') else 9)\"")


@pytest.fixture(autouse=True)
def _python_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """The sandbox finds `python` on the PATH: the one with setuptools-scm installed."""
    monkeypatch.setenv("PATH", f"{os.path.dirname(sys.executable)}{os.pathsep}{os.environ['PATH']}")


def scm_repo(root: Path, *, tag: str | None) -> tuple[Path, str]:
    setup = [SEES_VARIABLE] if bubblewrap_available() else []
    config = config_text(validate=[BUILD_VERSION, VALIDATE], setup=setup, batch_size=10)
    repo = make_repo(root, {**sample_files(config=config), "pyproject.toml": PYPROJECT})
    if tag is not None:
        git(repo, "tag", tag)
    (repo / "README.md").write_text("# calc\n\nOne commit after the tag.\n")
    return repo, commit_all(repo, "a commit after the tag")


def test_a_setuptools_scm_package_builds_with_the_version_of_the_base(tmp_path: Path) -> None:
    repo, head = scm_repo(tmp_path / "repo", tag="v1.4.0")
    sink = Recorder()
    outcome = session(repo, 1, sink).run(issue(), yes=True)
    assert outcome.exit_code == 0, outcome.message
    job = session(repo, 1).load()
    version = f"1.4.0.post1+g{head[:7]}"
    assert job.git_version is not None and job.git_version.version == version
    assert job.git_version.env["SETUPTOOLS_SCM_PRETEND_VERSION_FOR_CALC_DEMO"] == version
    assert job.baseline_ok is True
    build = job.baseline[0]
    assert build.exit_code == 0 and version in build.output_tail  # setuptools-scm printed it
    plan = "\n".join(sink.texts(Publication.PLAN))
    assert f"Version from git (setuptools-scm; the sandbox hides `.git`): `{version}`" in plan
    assert "`SETUPTOOLS_SCM_PRETEND_VERSION_FOR_CALC_DEMO`" in plan


def test_without_a_tag_the_version_is_zero_with_the_commit(tmp_path: Path) -> None:
    repo, head = scm_repo(tmp_path / "repo", tag=None)
    sink = Recorder()
    outcome = session(repo, 1, sink).run(issue(), yes=False)
    assert outcome.exit_code == 3, outcome.message  # the plan gate, with a passing baseline
    job = session(repo, 1).load()
    assert job.git_version is not None and job.git_version.version == f"0.0.0+g{head[:7]}"
    assert job.baseline_ok is True, job.baseline
    assert f"no tag reaches `{head[:7]}`" in "\n".join(sink.texts(Publication.PLAN))
