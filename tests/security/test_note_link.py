"""The change note is written by Stepwise itself, outside the sandbox, into the job's worktree
at the head the repository committed: a notes folder committed as a link to a host directory
(`docs/agent-changes -> /elsewhere`) is refused, never followed (safe_paths.put_regular). Real
git, a real local job."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from jobs.adapters.safe_paths import UnsafePathError
from tests.kit.local_e2e import build_sample, issue, load_job, session
from tests.kit.repos import git


def test_a_linked_notes_folder_is_refused_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    repo = build_sample(tmp_path / "repo")
    (repo / "docs").mkdir()
    os.symlink(outside, repo / "docs" / "agent-changes")
    git(repo, "add", "docs/agent-changes")
    git(repo, "commit", "-q", "-m", "notes folder as a link")

    with pytest.raises(UnsafePathError) as refused:
        session(repo).run(issue(), yes=True)
    assert os.listdir(outside) == []  # nothing written through the link
    assert "its parent `docs/agent-changes` is a symlink" in str(refused.value)
    assert "notes_dir" in refused.value.hint
    job = load_job(repo)
    assert job.note_commit is None
