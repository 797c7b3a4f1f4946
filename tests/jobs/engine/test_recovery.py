"""Recovery end to end (jobs/engine/recover.py and the loop): a crash between the commit and
the state write (the batch is adopted, not redone), a lost record found again from its branch,
and uncommitted changes in the checkout mentioned and left out."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from jobs.kernel.gates import Verb
from jobs.kernel.model import BatchStatus
from jobs.ports import Publication
from tests.jobs.engine.recovery_kit import run_until_first_batch
from tests.kit.local_e2e import (
    MODULES,
    Recorder,
    assert_exit,
    batch_commits,
    branch_commits,
    branch_head,
    build_sample,
    config_text,
    edit_state,
    issue,
    load_job,
    session,
    show,
    state_path,
    stepwise_branches,
)
from tests.kit.repos import git


@pytest.mark.parametrize("left_as", ["pending", "in_progress"])
def test_batch_committed_but_not_recorded_is_adopted_not_redone(
    tmp_path: Path, left_as: str
) -> None:
    repo = build_sample(tmp_path / "repo", config=config_text(batches_per_milestone=4))
    run_until_first_batch(repo)
    job = load_job(repo)
    first = job.batch(1)
    assert first.status is BatchStatus.COMPLETED and first.commit is not None
    sha = first.commit
    assert branch_head(repo, job.branch) == sha
    parent = git(repo, "rev-parse", f"{sha}^")

    def forget_the_commit(data: dict[str, Any]) -> None:
        # What the record looks like when the worker died after `git update-ref`,
        # before the state write: batch 1 still pending, the head still its parent.
        record = data["batches"][0]
        record.update(status=left_as, commit=None, adopted=False, consecutive_failures=0)
        if left_as == "pending":
            record["attempts"] = []
        else:  # the attempt was under way: no outcome, no finish time
            record["attempts"][-1].update(outcome="running", finished_at=None, commands=[])
        data["head_sha"] = parent
        data["status"] = "running"

    edit_state(repo, forget_the_commit)
    assert load_job(repo).batch(1).status == left_as

    outcome = session(repo).run(issue(), yes=True)
    assert_exit(outcome, 0)
    job = load_job(repo)
    commits = branch_commits(repo, job)
    carrying = [c for c in commits if c.trailers.get("Stepwise-Batch") == "1"]
    assert [c.sha for c in carrying] == [sha]  # exactly one commit, the original
    first = job.batch(1)
    assert first.status is BatchStatus.COMPLETED and first.adopted is True and first.commit == sha
    assert len(first.attempts) == (0 if left_as == "pending" else 1)  # nothing was redone
    assert len(batch_commits(commits)) == len(job.batches)
    assert any(e.kind == "adopt" and e.batch == 1 for e in job.events)


def test_lost_progress_file_is_rebuilt_from_the_branch_without_redoing_batches(
    tmp_path: Path,
) -> None:
    # per_milestone: the note is committed at milestone 1, so the rebuilt job must keep its path
    # (under the default at_end a lost record's note is not on the branch yet, and a new one is
    # named when the job ends)
    repo = build_sample(tmp_path / "repo", config=config_text(batches_per_milestone=1,
                                                              notes="per_milestone"))
    first = session(repo).run(issue(), yes=False)
    assert_exit(first, 3)
    _, at_milestone = session(repo).verb(Verb.APPROVE)
    assert_exit(at_milestone, 3)  # milestone 1 (one batch) done, its note committed
    before = load_job(repo)
    committed = before.batch(1).commit
    state_path(repo).unlink()

    outcome = session(repo).run(issue(), yes=True)

    assert_exit(outcome, 0)
    job = load_job(repo)
    assert job.id == before.id and job.branch == before.branch == "stepwise/issue-7"
    assert job.note_path == before.note_path
    assert job.batch(1).commit == committed and job.batch(1).adopted
    commits = batch_commits(branch_commits(repo, job))
    numbers = [c.trailers["Stepwise-Batch"] for c in commits]
    assert sorted(numbers) == [str(b.number) for b in job.batches]  # each batch exactly once
    assert stepwise_branches(repo) == ["stepwise/issue-7"]


def test_uncommitted_changes_are_mentioned_and_left_out(tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo")
    edited = next(iter(MODULES))
    (repo / edited).write_text((repo / edited).read_text() + "# my local edit\n")
    sink = Recorder()
    session(repo, sink=sink).run(issue(), yes=True)
    notices = [t for t in sink.texts(Publication.NOTICE) if "uncommitted" in t]
    assert notices and "1 uncommitted change" in notices[0]
    job = load_job(repo)
    assert "# my local edit" not in show(repo, job.branch, edited)
    assert "# my local edit" in (repo / edited).read_text()
