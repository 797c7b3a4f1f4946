"""Fixed costs paid once (local mode, a real repository): the final review does not run the
validation again when the head is the tree the last batch validated and the base has not
moved, and the change note says so."""

from __future__ import annotations

from pathlib import Path

from tests.kit.local_e2e import assert_exit, build_sample, issue, load_job, session, show


def test_the_final_review_reuses_the_last_batchs_validation(tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo")
    assert_exit(session(repo).run(issue(), yes=True), 0)
    job = load_job(repo)
    review = job.final_review
    last = job.batches[-1]
    assert review is not None and review.ok and review.commands == []
    assert review.reused_from == f"batch {last.number} (`{(last.commit or '')[:7]}`)"
    note = show(repo, job.branch, job.note_path)
    assert (f"Validation not run again: the head's tree is the one batch {last.number} "
            f"(`{(last.commit or '')[:7]}`) validated") in note
