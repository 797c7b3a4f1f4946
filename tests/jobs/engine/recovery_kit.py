"""Shared steps of the recovery tests (no tests here): a worker that dies right after the first
batch is committed, a local job brought to its first milestone, and a human's clone of its branch."""

from __future__ import annotations

from pathlib import Path

import pytest

from jobs.kernel.gates import Verb
from jobs.kernel.model import Gate
from jobs.ports import Publication
from tests.kit.local_e2e import assert_exit, build_sample, config_text, issue, load_job, session
from tests.kit.repos import git


class Crash(Exception):
    """Stands in for the worker dying."""


def crash_after_first_batch(kind: Publication, text: str) -> None:
    if kind is Publication.PROGRESS:  # published right after a batch is committed and recorded
        raise Crash


def run_until_first_batch(repo: Path) -> None:
    with pytest.raises(Crash):
        session(repo, sink=crash_after_first_batch).run(issue(), yes=True)  # type: ignore[arg-type]


def at_first_milestone(tmp_path: Path, **config: object) -> Path:
    repo = build_sample(tmp_path / "repo", config=config_text(**config)) if config \
        else build_sample(tmp_path / "repo")
    local = session(repo)
    assert_exit(local.run(issue(), yes=False), 3)
    assert_exit(local.verb(Verb.APPROVE)[1], 3)
    job = load_job(repo)
    assert job.gate is not None and job.gate.kind is Gate.MILESTONE
    return repo


def human_clone(repo: Path, tmp_path: Path, branch: str) -> Path:
    clone = tmp_path / "human"
    git(tmp_path, "clone", "-q", "--branch", branch, str(repo), str(clone))
    return clone
