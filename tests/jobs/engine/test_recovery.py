"""Recovery end to end: a crash between commit and state write, humans on the branch, reverts."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from jobs.adapters.workspace import Repository
from jobs.domain.gates import RefusedError, Verb
from jobs.domain.model import BatchStatus, Gate, JobStatus
from jobs.ports import Publication
from tests.kit.local_e2e import (
    BROKEN_MODULE,
    MODULES,
    NUMBER,
    STEPWISE,
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
    note_commits,
    session,
    show,
    snapshot,
    state_path,
    stepwise_branches,
    write_issue,
)
from tests.kit.repos import commit_all, git
from tests.kit.waiting import process_running


class Crash(Exception):
    """Stands in for the worker dying."""


# -- 4. a crash between the commit and the state write -------------------------------------------

def crash_after_first_batch(kind: Publication, text: str) -> None:
    if kind is Publication.PROGRESS:  # published right after a batch is committed and recorded
        raise Crash


def run_until_first_batch(repo: Path) -> None:
    with pytest.raises(Crash):
        session(repo, sink=crash_after_first_batch).run(issue(), yes=True)  # type: ignore[arg-type]


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


def test_cancel_while_running_stops_at_the_next_safe_point(tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo", config=config_text(batches_per_milestone=4))
    run_until_first_batch(repo)
    assert load_job(repo).status is JobStatus.RUNNING
    local = session(repo)
    with local.store.lock(NUMBER):  # another process is advancing the job
        message, requested = local.verb(Verb.CANCEL)
    assert "next safe point" in message
    assert_exit(requested, 5)  # accepted: the job will end cancelled (not 1, "failed")
    assert load_job(repo).status is JobStatus.CANCEL_REQUESTED

    outcome = session(repo).run(issue(), yes=True)  # the running process reaches a safe point
    assert_exit(outcome, 5)
    job = load_job(repo)
    assert job.status is JobStatus.CANCELLED
    assert [b.status for b in job.batches] == [BatchStatus.COMPLETED, BatchStatus.PENDING,
                                               BatchStatus.PENDING]
    commits = branch_commits(repo, job)
    assert [c.trailers.get("Stepwise-Batch") for c in batch_commits(commits)] == ["1"]
    assert commits[-1].trailers.get("Stepwise-Note") == "cancelled"
    assert "## Cancelled" in show(repo, job.branch, job.note_path)


# -- 5. humans on the job branch -----------------------------------------------------------------

def at_first_milestone(tmp_path: Path) -> Path:
    repo = build_sample(tmp_path / "repo")
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


# -- 6. `revert K` -------------------------------------------------------------------------------

def test_revert_adds_revert_commit_marks_batch_and_rewrites_note(tmp_path: Path) -> None:
    repo = at_first_milestone(tmp_path)
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
    # The note was rewritten in a commit of its own, after the revert.
    notes = note_commits(commits)
    assert len(notes) == notes_before + 1 and commits[-1] is notes[-1]
    note = show(repo, job.branch, job.note_path)
    assert "## Reverted" in note and "- batch 2: reverted with `stepwise revert`" in note

    # The job finishes; the reverted batch stays reverted and its matches become leftovers.
    assert_exit(session(repo).verb(Verb.APPROVE)[1], 0)
    job = load_job(repo)
    assert job.batch(2).status is BatchStatus.REVERTED
    assert job.status is JobStatus.COMPLETED
    leftovers = job.final_review.leftovers if job.final_review else []
    assert {item.split(":")[0] for item in leftovers} == set(job.batch(2).files)
    assert sum(1 for c in branch_commits(repo, job) if "Stepwise-Revert" in c.trailers) == 1


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


def repo_is_ancestor(repo: Path, ancestor: str, ref: str) -> bool:
    head = Repository(repo).resolve(ref)
    assert head is not None
    return Repository(repo).is_ancestor(ancestor, head)


# -- the final review against a base that moved --------------------------------------------------

FAILING_TEST = '''import unittest


class BaseTests(unittest.TestCase):
    def test_added_on_main(self):
        self.assertEqual("main", "broken")
'''


def test_final_review_merges_the_moved_base(tmp_path: Path) -> None:
    repo = at_first_milestone(tmp_path)
    (repo / "README.md").write_text("# calc\n\nMoved on main.\n")
    main_head = commit_all(repo, "main: docs")
    assert_exit(session(repo).verb(Verb.APPROVE)[1], 0)
    job = load_job(repo)
    assert job.final_review is not None and job.final_review.ok
    assert job.final_review.merged_with_base == main_head
    assert job.final_review.commands[0].exit_code == 0
    assert not repo_is_ancestor(repo, main_head, job.branch)  # the merge is not committed


def test_final_review_failure_gate_retry_then_approve_finishes_anyway(tmp_path: Path) -> None:
    repo = at_first_milestone(tmp_path)
    (repo / "tests/test_main.py").write_text(FAILING_TEST)
    commit_all(repo, "main: a test that fails")

    outcome = session(repo).verb(Verb.APPROVE)[1]
    assert_exit(outcome, 4)
    job = load_job(repo)
    assert job.gate is not None and job.gate.kind is Gate.FAILURE and job.gate.batch is None
    report = job.gate.report
    assert report is not None and report.code == "final_review_failed"
    assert "test_added_on_main" in report.evidence["output_tail"]
    assert "approve" in report.hint
    assert all(b.status is BatchStatus.COMPLETED for b in job.batches)

    assert_exit(session(repo).verb(Verb.RETRY)[1], 4)  # the review runs again, fails again
    with pytest.raises(RefusedError, match="nothing to skip"):  # no batch to skip here
        session(repo).verb(Verb.SKIP, reason="ship it")
    assert load_job(repo).gate.report.code == "final_review_failed"  # type: ignore[union-attr]

    message, outcome = session(repo).verb(Verb.APPROVE)  # "approve to finish anyway"
    assert "final review did not pass" in message
    assert_exit(outcome, 0)
    job = load_job(repo)
    assert job.status is JobStatus.COMPLETED
    assert job.final_review is not None and not job.final_review.ok
    note = show(repo, job.branch, job.note_path)
    assert "does NOT pass" in note and "exit 1" in note.split("## Final review", 1)[1]


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
    repo = build_sample(tmp_path / "repo", broken=True, config=config_text(batches_per_milestone=4))
    assert_exit(session(repo).run(issue(), yes=True), 4)
    job = load_job(repo)
    assert job.gate is not None and job.gate.kind is Gate.FAILURE and job.gate.batch == 2
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
    batch = job.batch(2)
    assert batch.status is BatchStatus.COMPLETED
    assert git(repo, "rev-parse", f"{batch.commit}^") == fix
    assert [a.outcome for a in batch.attempts] == ["failed", "failed", "committed"]
    assert job.final_review is not None and job.final_review.ok


# -- the whole record lost: the job is found again from its branch -------------------------------

def test_lost_progress_file_is_rebuilt_from_the_branch_without_redoing_batches(
    tmp_path: Path,
) -> None:
    repo = build_sample(tmp_path / "repo", config=config_text(batches_per_milestone=1))
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


# -- cancel during a long validation command -------------------------------------------------------

def test_cancel_ends_a_running_validation_with_its_process_group(tmp_path: Path) -> None:
    marker = f"long-validation-{os.getpid()}"
    slow = f"python -c \"import time, sys; time.sleep(120)\" {marker}"
    repo = build_sample(tmp_path / "repo", config=config_text(validate=[slow]))
    issue_file = write_issue(tmp_path / "issue.md")
    env = {**os.environ, "NO_COLOR": "1"}
    # The baseline runs the slow validation too: cancel arrives while it (or a batch) runs.
    runner = subprocess.Popen([str(STEPWISE), "run", "--repo", str(repo), "--issue",
                               str(issue_file), "--number", str(NUMBER), "--yes"],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    try:
        deadline = time.monotonic() + 30
        while not process_running(marker):
            assert time.monotonic() < deadline, "the validation never started"
            time.sleep(0.1)
        cancelled = subprocess.run([str(STEPWISE), "cancel", "--repo", str(repo), "--number",
                                    str(NUMBER)], capture_output=True, text=True, env=env,
                                   timeout=60, check=False)
        assert cancelled.returncode == 5, cancelled.stdout + cancelled.stderr
        started = time.monotonic()
        assert runner.wait(timeout=30) == 5
        assert time.monotonic() - started < 10
    finally:
        runner.kill()
    assert not process_running(marker)
    job = load_job(repo)
    assert job.status is JobStatus.CANCELLED
    assert not batch_commits(branch_commits(repo, job))


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
