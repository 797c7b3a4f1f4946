"""Fixed costs paid once (local mode, a real repository): the final review does not run the
validation again when the head is the tree the last batch validated and the base has not
moved, and the change note says so; a job reuses a baseline recorded for the same tree,
commands and environment."""

from __future__ import annotations

from pathlib import Path

from jobs.ports import Publication
from tests.kit.local_e2e import (
    Recorder,
    assert_exit,
    build_sample,
    config_text,
    issue,
    load_job,
    session,
    show,
)
from tests.kit.repos import commit_all, git


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


def plan_of(repo: Path, number: int) -> str:
    sink = Recorder()
    assert_exit(session(repo, number, sink).run(issue(), yes=False), 3)  # at the plan gate
    return "\n".join(sink.texts(Publication.PLAN))


def test_a_recorded_baseline_is_reused_until_the_tree_or_a_command_changes(
        tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo")
    plan_of(repo, 1)
    first = load_job(repo, 1)
    assert first.baseline_ok and first.baseline_from == ""

    # Another job on the same tree with the same commands: the result is reused, not re-run.
    second_plan = plan_of(repo, 2)
    second = load_job(repo, 2)
    reused = f"issue-1/{first.base_sha[:7]}"
    assert second.baseline_ok and second.baseline_from == reused
    assert second.baseline == first.baseline  # the recorded evidence, durations and all
    assert f"baseline reused from {reused}" in second_plan
    assert any(e.message == f"baseline reused from {reused}" for e in second.events)

    # A changed validation command (the working tree's config) runs it.
    (repo / ".github/stepwise.yml").write_text(
        config_text(validate=["python -m unittest discover -s tests"]))
    third_plan = plan_of(repo, 3)
    third = load_job(repo, 3)
    assert third.baseline_ok and third.baseline_from == "" and "reused" not in third_plan
    assert third.baseline[0].display == "python -m unittest discover -s tests"

    # A changed tree runs it too.
    git(repo, "checkout", "-q", "--", ".github/stepwise.yml")
    (repo / "README.md").write_text("# calc\n\nChanged.\n")
    commit_all(repo, "readme")
    fourth_plan = plan_of(repo, 4)
    assert load_job(repo, 4).baseline_from == "" and "reused" not in fourth_plan
