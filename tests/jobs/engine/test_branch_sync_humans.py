"""Humans on a local job's branch, end to end (jobs/engine/branch_sync.py): a git revert of a
batch, a commit of their own (the human-commit gate, approve continues on top), a rewritten
branch, a deleted branch, and a fix pushed at a failure gate."""

from __future__ import annotations

from pathlib import Path

from jobs.kernel.gates import Verb
from jobs.kernel.model import BatchStatus, Gate, JobStatus
from tests.jobs.engine.recovery_kit import at_first_milestone, human_clone
from tests.kit.local_e2e import (
    BROKEN_MODULE,
    assert_exit,
    batch_commits,
    branch_commits,
    branch_head,
    build_sample,
    config_text,
    issue,
    load_job,
    session,
    show,
)
from tests.kit.repos import git


def test_human_git_revert_marks_the_batch_reverted_without_a_gate(tmp_path: Path) -> None:
    repo = at_first_milestone(tmp_path)
    job = load_job(repo)
    sha = job.batch(1).commit
    assert sha is not None
    clone = human_clone(repo, tmp_path, job.branch)
    git(clone, "revert", "--no-edit", sha)
    revert_sha = git(clone, "rev-parse", "HEAD")
    git(clone, "push", "-q", "origin", f"HEAD:{job.branch}")

    outcome = session(repo).verb(Verb.APPROVE)[1]
    assert_exit(outcome, 0)
    job = load_job(repo)
    batch = job.batch(1)
    assert batch.status is BatchStatus.REVERTED
    assert batch.revert_commit == revert_sha
    assert "human" in batch.reason
    assert not any(e.kind == "gate" and "human_commit" in e.message for e in job.events)
    commits = branch_commits(repo, job)
    assert revert_sha in [c.sha for c in commits]
    note = show(repo, job.branch, job.note_path)
    assert "## Reverted" in note and "- batch 1: reverted by a human" in note
    for path in job.batch(1).files:  # the revert stands: batch 1's files are as on the base
        assert show(repo, job.branch, path) == show(repo, job.base_sha, path)


def test_human_commit_opens_gate_and_approve_continues_on_top(tmp_path: Path) -> None:
    repo = at_first_milestone(tmp_path)
    job = load_job(repo)
    clone = human_clone(repo, tmp_path, job.branch)
    (clone / "README.md").write_text("# calc\n\nEdited by a human.\n")
    git(clone, "commit", "-q", "-am", "docs: a human edit")
    human_sha = git(clone, "rev-parse", "HEAD")
    git(clone, "push", "-q", "origin", f"HEAD:{job.branch}")

    outcome = session(repo).verb(Verb.APPROVE)[1]
    assert_exit(outcome, 4)
    job = load_job(repo)
    assert job.gate is not None and job.gate.kind is Gate.HUMAN_COMMIT
    assert human_sha[:7] in job.gate.reason
    assert "docs: a human edit" in outcome.message
    assert branch_head(repo, job.branch) == human_sha  # nothing added on top yet

    outcome = session(repo).verb(Verb.APPROVE)[1]
    assert_exit(outcome, 0)
    job = load_job(repo)
    commits = branch_commits(repo, job)
    shas = [c.sha for c in commits]
    assert human_sha in shas
    later = commits[shas.index(human_sha) + 1:]
    assert [c.trailers.get("Stepwise-Batch") for c in batch_commits(later)] == ["3"]
    assert show(repo, job.branch, "README.md").endswith("Edited by a human.")
    assert all(b.status is BatchStatus.COMPLETED for b in job.batches)


def test_rewritten_branch_opens_gate_and_lost_batches_are_redone_once(tmp_path: Path) -> None:
    repo = at_first_milestone(tmp_path)
    job = load_job(repo)
    first = job.batch(1).commit
    lost = job.batch(2).commit
    assert first is not None and lost is not None
    clone = human_clone(repo, tmp_path, job.branch)
    git(clone, "reset", "-q", "--hard", first)  # drop batch 2 and the note
    git(clone, "push", "-q", "--force", "origin", f"HEAD:{job.branch}")

    outcome = session(repo).verb(Verb.APPROVE)[1]
    assert_exit(outcome, 4)
    job = load_job(repo)
    assert job.gate is not None and job.gate.kind is Gate.HUMAN_COMMIT
    assert "rewritten" in job.gate.reason

    assert_exit(session(repo).verb(Verb.APPROVE)[1], 0)
    job = load_job(repo)
    commits = branch_commits(repo, job)
    assert [c.trailers["Stepwise-Batch"] for c in batch_commits(commits)] == ["1", "2", "3"]
    assert batch_commits(commits)[0].sha == first  # kept, not redone
    # Redone on the rewritten branch (the commit may even come out byte-identical).
    assert len(job.batch(2).attempts) == 2
    assert git(repo, "rev-parse", f"{job.batch(2).commit}^") == first


def test_deleted_job_branch_fails_the_job(tmp_path: Path) -> None:
    repo = at_first_milestone(tmp_path)
    job = load_job(repo)
    git(repo, "branch", "-D", job.branch)
    outcome = session(repo).verb(Verb.APPROVE)[1]
    assert_exit(outcome, 1)
    job = load_job(repo)
    assert job.status is JobStatus.FAILED
    assert job.error is not None and job.error.code == "branch_deleted"
    assert "no longer exists" in outcome.message


def test_human_fix_pushed_at_a_failure_gate_then_retry_completes(tmp_path: Path) -> None:
    # One file per batch: a failing batch of several files would be split instead.
    repo = build_sample(tmp_path / "repo", broken=True,
                        config=config_text(batches_per_milestone=6, batch_size=1))
    assert_exit(session(repo).run(issue(), yes=True), 4)
    job = load_job(repo)
    number = next(b.number for b in job.batches if BROKEN_MODULE in b.files)
    assert job.gate is not None and job.gate.kind is Gate.FAILURE and job.gate.batch == number
    clone = human_clone(repo, tmp_path, job.branch)
    broken = clone / BROKEN_MODULE
    broken.write_text(broken.read_text().replace("import old_sum", "import new_sum, old_sum"))
    git(clone, "commit", "-q", "-am", "total: import new_sum as well")
    fix = git(clone, "rev-parse", "HEAD")
    git(clone, "push", "-q", "origin", f"HEAD:{job.branch}")

    assert_exit(session(repo).verb(Verb.RETRY)[1], 4)  # first: someone else's commit
    assert load_job(repo).gate.kind is Gate.HUMAN_COMMIT  # type: ignore[union-attr]
    assert_exit(session(repo).verb(Verb.APPROVE)[1], 0)  # on top of the fix, batch 2 passes
    job = load_job(repo)
    batch = job.batch(number)
    assert batch.status is BatchStatus.COMPLETED
    assert git(repo, "rev-parse", f"{batch.commit}^") == fix
    assert [a.outcome for a in batch.attempts] == ["failed", "committed"]  # no automatic retry
    assert job.final_review is not None and job.final_review.ok
