"""`ci.wait: per_batch` on a real repository: a pushed batch is `awaiting_ci`, completed only
on green; a red check withdraws the candidate with a lease on its exact sha (a failed attempt
whose evidence is the checks), a human commit on top means no rewrite; a worker that died
between push and record adopts the candidate as awaiting_ci. Also `off` and local mode."""

from __future__ import annotations

from pathlib import Path

from jobs.features.ci.parts import CI_FAILED
from jobs.features.ci.record import AWAITING_CI, ci, ci_batch, waiting_for_ci, withdrawn_checks
from jobs.kernel.gates import Verb, apply_verb
from jobs.kernel.model import BatchStatus, Gate, JobStatus
from jobs.notes.annotations import Annotation
from jobs.notes.progress import render_card
from jobs.ports import CiFailure, Publication
from tests.jobs.features.ci.ci_kit import CiRig, rig
from tests.kit.repos import git

TOTAL = "calc/beta/total.py"


def waiting_on_batch_1(tmp_path: Path, **config: object) -> CiRig:
    ci_rig = rig(tmp_path, ci={"wait": "per_batch", "checks": ["tests"]},
                 batches_per_milestone=4, **config)
    outcome = ci_rig.run(yes=True)
    job = ci_rig.job
    first = job.batch(1)
    assert outcome.exit_code == 0 and waiting_for_ci(job) and not job.is_active
    assert first.status == AWAITING_CI and first.commit == ci_rig.head()
    assert ci(job).wait is not None and (ci(job).wait.scope, ci(job).wait.number) == ("batch", 1)
    assert ci(job).wait.sha == first.commit
    assert job.batch(2).status is BatchStatus.PENDING  # nothing goes on before its verdict
    assert "batch 1: awaiting_ci" in render_card(job)
    return ci_rig


def red(ci_rig: CiRig, sha: str) -> None:
    ci_rig.forge.failure_details["tests"] = CiFailure(
        "tests", "failure", "https://ci.example/runs/9",
        annotations=(Annotation(TOTAL, 3, "NameError: name 'new_sum' is not defined"),),
        log_tail="E   NameError: name 'new_sum' is not defined")
    ci_rig.forge.report_check(sha, "tests", conclusion="failure")


def test_red_check_withdraws_the_candidate_and_the_second_attempt_passes(
        tmp_path: Path) -> None:
    ci_rig = waiting_on_batch_1(tmp_path)
    job = ci_rig.job
    candidate, parent = ci_rig.waiting_sha(), job.base_sha
    assert ci_rig.forge.check_runs[f"{job.id}:batch:1"].head_sha == candidate
    red(ci_rig, candidate)

    ci_rig.run(max_steps=1)  # the webhook's step: the verdict, and the withdrawal
    job = ci_rig.job
    first = job.batch(1)
    assert ci_rig.head() == parent == job.head_sha  # the branch is back at the parent
    assert first.status is BatchStatus.FAILED and first.commit is None
    assert first.consecutive_failures == 1 and ci(job).wait is None and job.is_active
    attempt = first.attempts[-1]
    assert attempt.outcome == "ci_failed"
    assert [c.name for c in withdrawn_checks(first, attempt.number)] == ["tests"]
    assert attempt.error is not None and "`tests`" in attempt.error.message
    assert f"{TOTAL}:3: NameError" in attempt.error.evidence["output_tail"]  # the next is told
    assert ci_batch(first).results[-1].state == "failed" and ci(job).results == []  # kept on the batch

    ci_rig.run()  # attempt 2 is pushed and waits for its own checks
    job = ci_rig.job
    assert len(job.batch(1).attempts) == 2 and job.batch(1).status == AWAITING_CI
    while waiting_for_ci(job):  # green from here on, for each candidate in turn
        ci_rig.forge.report_check(ci_rig.waiting_sha(), "tests")
        ci_rig.run()
        job = ci_rig.job
    assert job.status is JobStatus.COMPLETED
    assert all(b.status is BatchStatus.COMPLETED for b in job.batches)
    assert [r.state for r in ci_batch(job.batch(1)).results] == ["failed", "passed"]
    assert "CI passed" in render_card(job)


def test_withdrawals_count_as_failed_attempts_up_to_the_failure_gate(tmp_path: Path) -> None:
    ci_rig = waiting_on_batch_1(tmp_path, max_failed_attempts=1)
    red(ci_rig, ci_rig.waiting_sha())
    outcome = ci_rig.run()
    job = ci_rig.job
    assert job.gate is not None and job.gate.kind is Gate.FAILURE and outcome.exit_code == 4
    assert job.gate.batch == 1 and "withdrawn: CI failed: `tests`" in job.gate.reason
    assert ci_rig.head() == job.base_sha


def test_a_human_commit_on_top_of_the_candidate_is_never_rewritten(tmp_path: Path) -> None:
    ci_rig = waiting_on_batch_1(tmp_path)
    job = ci_rig.job
    candidate = ci_rig.waiting_sha()
    git(ci_rig.repo, "checkout", "-q", job.branch)
    (ci_rig.repo / "NOTES.txt").write_text("a maintainer's commit\n")
    git(ci_rig.repo, "add", "NOTES.txt")
    git(ci_rig.repo, "commit", "-q", "-m", "maintainer: notes")
    human = git(ci_rig.repo, "rev-parse", "HEAD")
    git(ci_rig.repo, "checkout", "-q", "main")
    red(ci_rig, candidate)

    outcome = ci_rig.run()
    job = ci_rig.job
    assert ci_rig.head() == human  # no rewrite
    git(ci_rig.repo, "merge-base", "--is-ancestor", candidate, human)  # still in its history
    assert job.gate is not None and job.gate.kind is Gate.HUMAN_COMMIT and outcome.exit_code == 4
    assert "is no longer at" in job.gate.reason and "batch 1" in job.gate.reason
    assert job.batch(1).status is BatchStatus.FAILED and ci(job).wait is None


def test_a_candidate_adopted_after_a_crash_waits_for_its_checks(tmp_path: Path) -> None:
    ci_rig = waiting_on_batch_1(tmp_path)
    job = ci_rig.job
    candidate = ci_rig.waiting_sha()
    # What the record looks like when the worker died after the push, before the record.
    first = job.batch(1)
    first.status, first.commit, first.consecutive_failures = BatchStatus.IN_PROGRESS, None, 0
    first.attempts[-1].outcome, first.attempts[-1].finished_at = "running", None
    job.head_sha, ci(job).wait = job.base_sha, None
    ci_rig.services.store.save(job)

    outcome = ci_rig.run()
    job = ci_rig.job
    first = job.batch(1)
    assert outcome.exit_code == 0 and waiting_for_ci(job)
    assert first.status == AWAITING_CI and first.adopted  # a candidate, not done
    assert first.commit == candidate and ci(job).wait is not None and ci(job).wait.sha == candidate
    assert len(first.attempts) == 1  # not redone
    ci_rig.forge.report_check(candidate, "tests")
    ci_rig.run(max_steps=1)
    assert ci_rig.job.batch(1).status is BatchStatus.COMPLETED


def test_ci_wait_off_never_waits(tmp_path: Path) -> None:
    ci_rig = rig(tmp_path, ci={"wait": "off"})
    outcome = ci_rig.run(yes=True)
    job = ci_rig.job
    assert (outcome.status, outcome.exit_code) == (JobStatus.COMPLETED, 0)
    assert ci(job).results == [] and ci(job).wait is None
    assert all(ci_batch(b).results == [] for b in job.batches)
    assert "- CI: not waited for (`ci.wait: off`)" in ci_rig.forge.published(Publication.PLAN)[0]
    assert ci_rig.forge.check_runs[f"{job.id}:job"].conclusion == "success"


def test_local_mode_never_waits_and_the_plan_says_ci_is_not_used(tmp_path: Path) -> None:
    ci_rig = rig(tmp_path, ci={"wait": "per_batch"}, has_ci=False, server=False)
    outcome = ci_rig.run(yes=True)
    job = ci_rig.job
    assert (outcome.status, outcome.exit_code) == (JobStatus.COMPLETED, 0)
    assert ci(job).results == [] and all(
        b.status is BatchStatus.COMPLETED and not ci_batch(b).results for b in job.batches)
    plan = ci_rig.forge.published(Publication.PLAN)[0]
    assert "CI is not used in local mode (`ci.wait: per_batch` applies to server mode only)" \
        in plan


def test_the_server_plan_says_what_it_waits_for(tmp_path: Path) -> None:
    ci_rig = rig(tmp_path, ci={"wait": "per_batch", "checks": ["tests", "lint"], "timeout": 20})
    ci_rig.run(max_steps=2)
    plan = ci_rig.forge.published(Publication.PLAN)[0]
    assert "- CI: waits for `tests`, `lint` on each batch's commit (`ci.wait: per_batch`, " \
        "timeout 20 min)" in plan


def test_a_batch_whose_checks_time_out_can_be_skipped_and_is_withdrawn(tmp_path: Path) -> None:
    ci_rig = waiting_on_batch_1(tmp_path)
    candidate = ci_rig.waiting_sha()
    ci_rig.forge.report_check(candidate, "tests", "queued", None)
    ci_rig.clock.pass_minutes(61)
    outcome = ci_rig.run()
    job = ci_rig.job
    assert job.gate is not None and job.gate.kind == CI_FAILED and outcome.exit_code == 4
    assert job.gate.batch == 1 and job.batch(1).status == AWAITING_CI
    assert ci_rig.head() == candidate  # a timeout withdraws nothing by itself

    apply_verb(job, Verb.SKIP, reason="the runner pool is down")
    ci_rig.services.store.save(job)
    ci_rig.run(max_steps=1)
    job = ci_rig.job
    assert job.batch(1).status is BatchStatus.SKIPPED and job.batch(1).commit is None
    assert ci_rig.head() == job.base_sha == job.head_sha and ci(job).wait is None


def test_approve_at_a_batch_ci_failed_completes_it_and_goes_on(tmp_path: Path) -> None:
    ci_rig = waiting_on_batch_1(tmp_path)
    candidate = ci_rig.waiting_sha()
    ci_rig.clock.pass_minutes(61)  # `tests` never reported
    ci_rig.run()
    job = ci_rig.job
    apply_verb(job, Verb.APPROVE)
    ci_rig.services.store.save(job)
    ci_rig.run()
    job = ci_rig.job
    assert job.batch(1).status is BatchStatus.COMPLETED and job.batch(1).commit == candidate
    assert job.batch(2).status == AWAITING_CI  # the next batch, on top
    assert "CI timed out (accepted)" in render_card(job)


def test_a_withdrawal_done_by_a_worker_that_died_before_recording_it_is_taken_as_done(
        tmp_path: Path) -> None:
    ci_rig = waiting_on_batch_1(tmp_path)
    job = ci_rig.job
    candidate = ci_rig.waiting_sha()
    ci_rig.services.repository.withdraw(job.branch, candidate, job.base_sha)  # then it died
    red(ci_rig, candidate)
    ci_rig.run(max_steps=1)
    job = ci_rig.job
    assert job.gate is None and job.batch(1).status is BatchStatus.FAILED
    assert ci_rig.head() == job.base_sha == job.head_sha
