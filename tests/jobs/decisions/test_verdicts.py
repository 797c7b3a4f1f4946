"""The final review's verdict and a revert's refusals and result, on plain records."""

from __future__ import annotations

from jobs.decisions.verdicts import (
    batch_refusal,
    judge_review,
    revert_refusal,
    revert_summary,
    reverted_leftovers,
    review_gate_report,
    undone_files,
)
from jobs.kernel.job import Job
from jobs.kernel.model import BatchStatus, JobStatus
from jobs.kernel.records import CommandEvidence
from tests.kit.records import make_batch, make_job


def evidence(exit_code: int = 0, *, timed_out: bool = False) -> CommandEvidence:
    return CommandEvidence(argv=["pytest", "-q"], exit_code=exit_code, duration_s=1.0,
                           output_tail=f"exit {exit_code}", timed_out=timed_out)


def finished_job() -> Job:
    return make_job(batches=[make_batch(1, status=BatchStatus.COMPLETED),
                             make_batch(2, status=BatchStatus.SKIPPED)])


def test_a_clean_merge_that_validates_passes_and_completes() -> None:
    review = judge_review(finished_job(), base_now="a" * 40, merges=True,
                          commands=[evidence()], failure=None, leftovers=["src/x.py:3"])
    assert review.ok and review.leftovers == ["src/x.py:3"] and review.unfinished_batches == []
    assert review_gate_report(review, accepted=False) is None


def test_a_failing_validation_fails_with_the_output_tail_unless_approved() -> None:
    failing = evidence(1)
    review = judge_review(finished_job(), base_now="a" * 40, merges=True,
                          commands=[evidence(), failing], failure=failing)
    assert not review.ok
    report = review_gate_report(review, accepted=False)
    assert report is not None and report.code == "final_review_failed"
    assert report.evidence["output_tail"] == "exit 1"
    assert "validation" in report.message
    assert review_gate_report(review, accepted=True) is None


def test_a_merge_conflict_fails_and_says_so() -> None:
    review = judge_review(finished_job(), base_now="a" * 40, merges=False, commands=[],
                          failure=None)
    report = review_gate_report(review, accepted=False)
    assert not review.ok and report is not None
    assert report.message == "the branch does not merge cleanly with the base"


def test_a_failed_setup_or_an_unfinished_batch_fails_the_review() -> None:
    assert not judge_review(finished_job(), base_now="a", merges=True, commands=[evidence(1)],
                            failure=None, setup_failed=True).ok
    job = make_job(batches=[make_batch(1, status=BatchStatus.COMPLETED), make_batch(2)])
    review = judge_review(job, base_now="a", merges=True, commands=[], failure=None)
    assert not review.ok and review.unfinished_batches == [2]


def test_a_revert_is_refused_while_the_job_works_or_others_changed_the_branch() -> None:
    running = revert_refusal(make_job(status=JobStatus.RUNNING), ())
    assert running is not None and "only while it waits" in running.message
    waiting = make_job(status=JobStatus.AWAITING_HUMAN)
    assert revert_refusal(waiting, ()) is None
    changed = revert_refusal(waiting, ["abc1234 'wip'"])
    assert changed is not None and changed.code == "branch_changed"
    assert "abc1234 'wip'" in changed.message


def test_only_a_committed_batch_can_be_reverted() -> None:
    refusal = batch_refusal(make_batch(1, status=BatchStatus.SKIPPED))
    assert refusal is not None and "batch 1 is skipped, not completed" in refusal.message
    assert batch_refusal(make_batch(1, status=BatchStatus.COMPLETED, commit="d" * 40)) is None


def test_a_revert_brings_back_the_targets_of_its_own_files_only() -> None:
    batch = make_batch(1, files=["src/a.py", "src/b.py"])
    back = reverted_leftovers(batch, ["src/a.py:3", "src/c.py:1", "src/b.py:10"])
    assert back == ["src/a.py:3", "src/b.py:10"]


def test_the_revert_summary_says_whether_the_reverted_head_validates() -> None:
    batch = make_batch(2, files=["src/a.py"], status=BatchStatus.REVERTED, revert_ok=False,
                       leftovers=["src/a.py:1"])
    assert revert_summary(batch, "e" * 40) == (
        "batch 2 reverted in eeeeeee; the reverted head does NOT pass validation; its change "
        "to 1 file is undone (`src/a.py`); 1 target came back, listed as leftovers for a human "
        "to confirm")
    assert "passes validation" in revert_summary(make_batch(2), "e" * 40)


def test_a_reverted_batch_undoes_the_files_its_commit_changed_whatever_the_recipe() -> None:
    batch = make_batch(2, files=["src/a.py", "src/b.py"], status=BatchStatus.REVERTED,
                       changed_files=["src/b.py"])
    assert undone_files(batch) == ["src/b.py"]
    assert undone_files(make_batch(3, files=["src/c.py"], status=BatchStatus.REVERTED)) == \
        ["src/c.py"]  # a record without `changed_files`: its files
    assert undone_files(make_batch(4, status=BatchStatus.COMPLETED)) == []
