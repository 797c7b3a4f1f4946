"""The final review end to end (jobs/engine/review.py) against a base that moved: the base is
merged for the review only, and a failing review opens the failure gate (retry, then approve
finishes anyway)."""

from __future__ import annotations

from pathlib import Path

import pytest

from jobs.adapters.workspace import Repository
from jobs.kernel.gates import RefusedError, Verb
from jobs.kernel.model import BatchStatus, Gate, JobStatus
from tests.jobs.engine.recovery_kit import at_first_milestone
from tests.kit.local_e2e import assert_exit, load_job, session, show
from tests.kit.repos import commit_all


def repo_is_ancestor(repo: Path, ancestor: str, ref: str) -> bool:
    head = Repository(repo).resolve(ref)
    assert head is not None
    return Repository(repo).is_ancestor(ancestor, head)


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
