"""Reverting a batch end to end (jobs/engine/revert.py): a revert commit, the batch marked and
the change note rewritten; a batch that is not completed is refused; modules keep working."""

from __future__ import annotations

from pathlib import Path

import pytest

from jobs.kernel.gates import RefusedError, Verb
from jobs.kernel.model import BatchStatus, JobStatus
from tests.jobs.engine.recovery_kit import at_first_milestone
from tests.kit.local_e2e import (
    MODULES,
    NUMBER,
    assert_exit,
    branch_commits,
    build_sample,
    issue,
    load_job,
    note_commits,
    session,
    show,
    snapshot,
)


@pytest.mark.parametrize("notes", ["per_milestone", "at_end"])
def test_revert_adds_revert_commit_marks_batch_and_rewrites_note(tmp_path: Path,
                                                                 notes: str) -> None:
    repo = at_first_milestone(tmp_path, notes=notes)
    job = load_job(repo)
    target = job.batch(2)
    assert target.commit is not None
    notes_before = len(note_commits(branch_commits(repo, job)))

    message, outcome = session(repo).revert(2)
    assert "batch 2 reverted" in message
    assert_exit(outcome, 3)  # still waiting at the milestone gate
    job = load_job(repo)
    batch = job.batch(2)
    assert batch.status is BatchStatus.REVERTED and batch.revert_commit is not None
    commits = branch_commits(repo, job)
    revert = next(c for c in commits if c.sha == batch.revert_commit)
    assert f"This reverts commit {target.commit}" in revert.body
    assert revert.trailers["Stepwise-Revert"] == "2"
    assert revert.trailers["Stepwise-Job"] == job.id
    assert revert.subject.startswith(f"stepwise(#{NUMBER}): revert batch 2")
    for path in batch.files:
        assert show(repo, batch.revert_commit, path) == show(repo, job.base_sha, path)
    # per_milestone: the note was rewritten in a commit of its own, after the revert; at_end:
    # no note commit before the end (the PR body carries the running account).
    written = note_commits(commits)
    if notes == "per_milestone":
        assert len(written) == notes_before + 1 and commits[-1] is written[-1]
        note = show(repo, job.branch, job.note_path)
        assert "## Reverted" in note and "- batch 2: reverted with `stepwise revert" in note
    else:
        assert written == [] and commits[-1].sha == batch.revert_commit

    # The job finishes; the reverted batch stays reverted and its matches become leftovers.
    assert_exit(session(repo).verb(Verb.APPROVE)[1], 0)
    job = load_job(repo)
    assert job.batch(2).status is BatchStatus.REVERTED
    assert job.status is JobStatus.COMPLETED
    leftovers = job.final_review.leftovers if job.final_review else []
    assert {item.split(":")[0] for item in leftovers} == set(job.batch(2).files)
    assert sum(1 for c in branch_commits(repo, job) if "Stepwise-Revert" in c.trailers) == 1
    assert "## Reverted" in show(repo, job.branch, job.note_path)  # the final note tells it


def test_revert_of_a_batch_that_is_not_completed_is_refused(tmp_path: Path) -> None:
    repo = at_first_milestone(tmp_path)
    pending = max(b.number for b in load_job(repo).batches)
    assert load_job(repo).batch(pending).status is BatchStatus.PENDING
    before = snapshot(repo)
    with pytest.raises(RefusedError, match="not completed"):
        session(repo).revert(pending)
    assert snapshot(repo) == before


def test_reverted_batches_keep_modules_working(tmp_path: Path) -> None:
    """Reverting every batch one by one leaves the package exactly as on the base."""
    repo = build_sample(tmp_path / "repo")
    assert_exit(session(repo).run(issue(), yes=True), 0)
    job = load_job(repo)
    for batch in job.batches:
        session(repo).revert(batch.number)
    job = load_job(repo)
    assert all(b.status is BatchStatus.REVERTED for b in job.batches)
    for path in MODULES:
        assert show(repo, job.branch, path) == show(repo, job.base_sha, path)
