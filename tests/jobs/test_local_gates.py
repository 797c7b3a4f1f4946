"""Local mode at its gates, end to end on real repositories: a batch failing validation
(failure gate, retry, skip), the spec changing (spec_changed), a failing baseline, and the
plan gate left out by `require_plan_approval: false`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from jobs.engine.engine import Outcome
from jobs.kernel.gates import Verb
from jobs.kernel.job import Job
from jobs.kernel.model import BatchStatus, Gate, JobStatus
from jobs.ports import Publication
from tests.kit.local_e2e import (
    BROKEN_MODULE,
    VALIDATE,
    Recorder,
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

# -- 2. a batch that fails validation (a `replace` fails the same way every time) ----------

@pytest.fixture
def failing_job(tmp_path: Path) -> tuple[Path, Outcome]:
    # One file per batch: a failing batch of several files is split instead (its culprit
    # then fails alone: tests/jobs/test_bisect_local.py).
    repo = build_sample(tmp_path / "repo", broken=True,
                        config=config_text(batches_per_milestone=6, batch_size=1))
    return repo, session(repo).run(issue(), yes=True)


def failing_batch(job: Job) -> int:
    return next(b.number for b in job.batches if BROKEN_MODULE in b.files)


def test_a_deterministic_failure_goes_to_the_failure_gate_without_a_retry(
        failing_job: tuple[Path, Outcome]) -> None:
    repo, outcome = failing_job
    assert_exit(outcome, 4)
    job = load_job(repo)
    number = failing_batch(job)
    batch = job.batch(number)
    assert job.status is JobStatus.AWAITING_HUMAN
    assert job.gate is not None and job.gate.kind is Gate.FAILURE and job.gate.batch == number
    assert batch.status is BatchStatus.FAILED and batch.commit is None
    # Never committed: no commit on the branch carries this batch's trailer.
    trailers = [c.trailers.get("Stepwise-Batch") for c in branch_commits(repo, job)]
    assert str(number) not in trailers
    assert len(batch.attempts) == 1  # `replace` edits the same way again: not retried
    assert "would fail the same way again, so it is not retried" in job.gate.reason
    for attempt in batch.attempts:
        assert attempt.outcome == "failed"
        assert attempt.error is not None and attempt.error.code == "validation_failed"
        assert attempt.error.evidence["command"] == VALIDATE
        assert attempt.error.evidence["exit_code"] not in (0, None)
        assert "NameError" in attempt.error.evidence["output_tail"]
        failed = [c for c in attempt.commands if c.exit_code != 0]
        assert failed and failed[-1].display == VALIDATE and "NameError" in failed[-1].output_tail
    report = job.gate.report
    assert report is not None
    assert report.code == "validation_failed"
    assert report.retry_class == "needs_human"
    assert report.hint
    assert "NameError" in outcome.message  # the output tail is shown with the gate


def test_retry_resets_and_fails_again_then_skip_carries_on(
    failing_job: tuple[Path, Outcome],
) -> None:
    repo, _ = failing_job
    local = session(repo)
    number = failing_batch(load_job(repo))
    message, outcome = local.verb(Verb.RETRY)
    assert "attempt counter reset" in message
    assert_exit(outcome, 4)
    job = load_job(repo)
    assert len(job.batch(number).attempts) == 2  # one more attempt after the reset
    assert job.batch(number).consecutive_failures == 1

    reason = "total.py imports old_sum by name; a human will port it"
    message, outcome = local.verb(Verb.SKIP, reason=reason)
    assert_exit(outcome, 0)
    job = load_job(repo)
    batch = job.batch(number)
    assert batch.status is BatchStatus.SKIPPED and batch.reason == reason
    assert batch.commit is None
    others = [b for b in job.batches if b.number != number]
    assert others and all(b.status is BatchStatus.COMPLETED for b in others)
    assert number < max(b.number for b in job.batches)  # the job carried on after the skip
    note = show(repo, job.branch, job.note_path)
    assert "## Skipped" in note
    assert f"- batch {number}: {reason}" in note
    # What the skipped batch left behind is listed for a human.
    assert any(item.startswith(BROKEN_MODULE) for item in job.final_review.leftovers)  # type: ignore[union-attr]
    assert BROKEN_MODULE in note.split("## Leftovers", 1)[1]


# -- 9. the spec changes -----------------------------------------------------------------------

def test_spec_changed_after_approval_opens_gate_then_replans(tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo", config=config_text(batches_per_milestone=1))
    local = session(repo)
    assert_exit(local.run(issue(), yes=False), 3)
    assert_exit(local.verb(Verb.APPROVE)[1], 3)  # milestone 1 (batch 1) is done
    before = load_job(repo)
    assert before.gate is not None and before.gate.kind is Gate.MILESTONE
    head = branch_head(repo, before.branch)

    changed = issue(not_doing=["remove old_sum() itself", "touch the tests"])
    outcome = local.run(changed, yes=False)
    assert_exit(outcome, 3)
    job = load_job(repo)
    assert job.gate is not None and job.gate.kind is Gate.SPEC_CHANGED
    assert "spec_changed" in outcome.message
    assert branch_head(repo, job.branch) == head  # nothing ran

    # --yes does not pass a spec_changed gate.
    assert_exit(local.run(changed, yes=True), 3)
    assert load_job(repo).gate.kind is Gate.SPEC_CHANGED  # type: ignore[union-attr]

    recorder = Recorder()
    outcome = session(repo, sink=recorder).verb(Verb.APPROVE)[1]
    assert_exit(outcome, 3)
    job = load_job(repo)
    assert job.gate is not None and job.gate.kind is Gate.PLAN
    assert job.spec.not_doing == ["remove old_sum() itself", "touch the tests"]
    assert job.approved_digest is None
    assert len(recorder.texts(Publication.PLAN)) == 1 and "touch the tests" in recorder.texts(
        Publication.PLAN)[0]
    # The committed batch is kept; only the rest is planned again.
    first = job.batch(1)
    assert first.status is BatchStatus.COMPLETED and first.commit == before.batch(1).commit
    assert [b.number for b in job.batches] == list(range(1, len(job.batches) + 1))

    assert_exit(local.run(changed, yes=True), 0)
    job = load_job(repo)
    assert len(batch_commits(branch_commits(repo, job))) == len(job.batches)


def test_spec_changed_before_approval_just_replans(tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo")
    recorder = Recorder()
    local = session(repo, sink=recorder)
    assert_exit(local.run(issue(), yes=False), 3)
    outcome = local.run(issue(batch_size=3), yes=False)
    assert_exit(outcome, 3)
    job = load_job(repo)
    assert job.gate is not None and job.gate.kind is Gate.PLAN
    assert job.spec.batch_size == 3
    assert len(recorder.texts(Publication.PLAN)) == 2
    assert not any(e.kind == "gate" and "spec_changed" in e.message for e in job.events)
    assert branch_head(repo, job.branch) == job.base_sha


# -- 10. a failing baseline --------------------------------------------------------------------

def test_failing_baseline_is_shown_and_yes_does_not_pass_the_plan(tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo", failing_baseline=True)
    recorder = Recorder()
    outcome = session(repo, sink=recorder).run(issue(), yes=True)
    assert_exit(outcome, 3)
    job = load_job(repo)
    assert job.gate is not None and job.gate.kind is Gate.PLAN
    assert job.baseline_ok is False
    assert job.baseline and job.baseline[0].exit_code != 0
    plan = recorder.texts(Publication.PLAN)[0]
    assert "FAILS" in plan and f"`{VALIDATE}` → exit 1" in plan
    assert branch_head(repo, job.branch) == job.base_sha
    # Running again with --yes still waits for a human.
    assert_exit(session(repo).run(issue(), yes=True), 3)
    assert load_job(repo).gate.kind is Gate.PLAN  # type: ignore[union-attr]


def test_require_plan_approval_false_starts_without_the_plan_gate(tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo", config=config_text(require_plan_approval=False))
    outcome = session(repo).run(issue(), yes=False)
    assert_exit(outcome, 3)
    job = load_job(repo)
    assert job.gate is not None and job.gate.kind is Gate.MILESTONE  # went straight to work
    assert job.approved_digest == job.spec_digest
    assert not any("plan-" in e.message for e in job.events if e.kind == "gate")


def test_require_plan_approval_false_still_stops_for_a_failing_baseline(tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo", failing_baseline=True,
                        config=config_text(require_plan_approval=False))
    outcome = session(repo).run(issue(), yes=True)
    assert_exit(outcome, 3)
    job = load_job(repo)
    assert job.gate is not None and job.gate.kind is Gate.PLAN
    assert branch_head(repo, job.branch) == job.base_sha



def test_the_note_keeps_each_plans_batches_across_a_re_plan(
        failing_job: tuple[Path, Outcome]) -> None:
    repo, _ = failing_job
    before = load_job(repo)
    number = failing_batch(before)
    committed = [b for b in before.batches if b.commit]
    assert committed and before.batch(number).status is BatchStatus.FAILED

    # The spec changes at the failure gate: leave the broken module out, plan again.
    changed = issue(exclude=["calc/legacy.py", BROKEN_MODULE])
    assert_exit(session(repo).run(changed, yes=False), 3)  # spec_changed
    assert_exit(session(repo).verb(Verb.APPROVE)[1], 3)  # the new plan
    assert_exit(session(repo).verb(Verb.APPROVE)[1], 0)
    job = load_job(repo)
    assert [p.reason for p in job.plans] == ["first plan", "the spec changed"]
    first = job.plans[0]
    assert [b.number for b in first.batches] == [b.number for b in before.batches]
    assert first.batches[number - 1].status == "failed" and first.batches[number - 1].attempts == 1
    note = show(repo, job.branch, job.note_path)
    history = note.split("## History", 1)[1].split("\n## ", 1)[0]
    assert f"- Plan 1 ({before.created_at:%Y-%m-%d}" in history and "first plan" in history
    for batch in committed:  # what the earlier plan committed is still told
        assert f"  - batch {batch.number} completed `{(batch.commit or '')[:7]}` " \
            f"(`{batch.files[0]}`)" in history
    assert f"  - batch {number} failed after 1 attempt (`{BROKEN_MODULE}`)" in history
    assert "- Plan 2 (" in history and "the spec changed" in history
    assert "the current plan (the batches above)" in history
