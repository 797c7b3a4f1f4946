"""A `replace` edit behind isolation stages only its batch's files: no second walk of the worktree.

The reset proved the files are the head's; the replace editor writes only the files it was
given, in Stepwise's own process; bubblewrap kills whatever a command leaves behind with its
namespace. Nothing else can have written, so staging reads those files alone. Without
isolation (a process may outlive its command) the whole worktree is looked at, as before.
"""

from __future__ import annotations

import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from jobs.adapters.sandbox import PlainSandbox, Sandbox, make_sandbox
from jobs.local import LocalSession
from tests.kit.local_e2e import (
    NUMBER,
    Recorder,
    assert_exit,
    batch_commits,
    branch_commits,
    build_sample,
    changed_paths,
    config_text,
    issue,
    load_job,
)


def statuses_per_batch(repo: Path, sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> float:
    calls: Counter[str] = Counter()
    real = subprocess.Popen.__init__

    def popen(self: Any, argv: Any, *args: Any, **kwargs: Any) -> None:
        if isinstance(argv, list) and argv[:1] == ["git"] and "status" in argv:
            calls["status"] += 1
        real(self, argv, *args, **kwargs)

    monkeypatch.setattr(subprocess.Popen, "__init__", popen)
    outcome = LocalSession(repo, NUMBER, sink=Recorder(), sandbox=sandbox).run(issue(), yes=True)
    monkeypatch.undo()
    assert_exit(outcome, 0)
    job = load_job(repo)
    commits = batch_commits(branch_commits(repo, job))
    assert len(commits) == len(job.batches)
    for batch, commit in zip(job.batches, commits, strict=True):
        assert changed_paths(repo, commit.sha) == sorted(batch.files)  # exactly the edit
        assert batch.changed_files == sorted(batch.files)
    return calls["status"] / len(job.batches)


def test_isolated_replace_batches_walk_the_worktree_once(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    box = make_sandbox(require_isolation=False)
    if not box.isolated:
        pytest.fail("bubblewrap is needed for this test (./scripts/test installs it)")
    config = config_text(batches_per_milestone=4)
    isolated = statuses_per_batch(build_sample(tmp_path / "a", config=config), box, monkeypatch)
    plain = statuses_per_batch(build_sample(tmp_path / "b", config=config), PlainSandbox(),
                               monkeypatch)
    assert plain - isolated >= 0.99  # staging's own walk, once a batch, only without isolation
