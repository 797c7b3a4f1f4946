"""`ci.wait: per_milestone` on a real repository, with the in-memory forge playing the
repository's CI: the milestone gate waits for the milestone head's checks, a red check opens
`ci_failed` naming the batch its annotation points at, and every answer to that gate."""

from __future__ import annotations

from pathlib import Path

import pytest

from jobs.engine.revert import revert_batch
from jobs.features.ci.parts import CI_FAILED
from jobs.features.ci.record import ci, waiting_for_ci
from jobs.kernel.gates import RefusedError, Verb, apply_verb
from jobs.kernel.model import BatchStatus, Gate, JobStatus
from jobs.notes.annotations import Annotation
from jobs.notes.change_note import render_note
from jobs.notes.check_runs import batch_check_name
from jobs.notes.progress import render_card
from jobs.ports import CiFailure, Publication
from tests.jobs.features.ci.ci_kit import CiRig, rig

TESTS_URL = "https://ci.example/runs/1"
AREA = "calc/alpha/area.py"  # batch 1's file


def waiting_at_milestone_1(tmp_path: Path, **config: object) -> CiRig:
    ci_rig = rig(tmp_path, ci={"checks": ["tests"], **config})
    outcome = ci_rig.run(yes=True)  # plan approved, batches 1 and 2 committed
    assert (outcome.status, outcome.exit_code) == (JobStatus.RUNNING, 0)
    job = ci_rig.job
    assert ci(job).wait is not None and waiting_for_ci(job) and not job.is_active
    assert (ci(job).wait.scope, ci(job).wait.number) == ("milestone", 1)
    assert ci(job).wait.sha == job.head_sha == ci_rig.head()
    assert [b.status for b in job.batches] == [BatchStatus.COMPLETED, BatchStatus.COMPLETED,
                                               BatchStatus.PENDING]
    assert job.gate is None
    return ci_rig


def test_a_repository_without_ci_is_not_waited_for(tmp_path: Path) -> None:
    ci_rig = rig(tmp_path, workflows=False)  # server mode, default per_milestone, no CI at all
    outcome = ci_rig.run(yes=True)
    job = ci_rig.job
    assert (outcome.status, outcome.exit_code) == (JobStatus.COMPLETED, 0)
    assert ci(job).wait is None and ci(job).results == []
    assert any(e.kind == "ci" and "no CI in this repository" in e.message for e in job.events)


def test_checks_on_the_base_head_mean_the_repository_has_ci(tmp_path: Path) -> None:
    ci_rig = rig(tmp_path, workflows=False)  # no workflow files, but an outside CI app
    ci_rig.forge.report_check(ci_rig.job.base_sha, "ci/circleci: test")
    ci_rig.run(yes=True)
    assert waiting_for_ci(ci_rig.job)


def test_a_workflows_directory_without_workflows_still_asks_the_base_head(tmp_path: Path) -> None:
    files = {".github/workflows/README.md": "no workflows here yet\n"}
    ci_rig = rig(tmp_path, workflows=False, extra_files=files)
    ci_rig.forge.report_check(ci_rig.job.base_sha, "ci/circleci: test")
    ci_rig.run(yes=True)
    assert waiting_for_ci(ci_rig.job)


def test_a_revert_while_the_milestone_waits_for_ci_waits_on_the_new_head(tmp_path: Path) -> None:
    ci_rig = waiting_at_milestone_1(tmp_path)  # no worker holds the job: it may take a revert
    sha = ci_rig.waiting_sha()
    message = revert_batch(ci_rig.engine(), 2)
    job = ci_rig.job
    assert "reverted" in message and job.batch(2).status is BatchStatus.REVERTED
    assert waiting_for_ci(job) and job.gate is None
    new_head = ci_rig.waiting_sha()
    assert new_head != sha and new_head == job.head_sha == ci_rig.head()
    ci_rig.forge.report_check(sha, "tests")  # the old head's checks are no verdict any more
    ci_rig.run(max_steps=1)
    assert waiting_for_ci(ci_rig.job) and ci_rig.job.gate is None
    ci_rig.forge.report_check(new_head, "tests")
    ci_rig.run()
    assert ci_rig.job.gate is not None and ci_rig.job.gate.kind is Gate.MILESTONE


def test_a_batch_candidate_waiting_for_ci_refuses_a_revert(tmp_path: Path) -> None:
    ci_rig = rig(tmp_path, ci={"wait": "per_batch", "checks": ["tests"]})
    ci_rig.run(yes=True)
    assert waiting_for_ci(ci_rig.job) and ci(ci_rig.job).wait is not None
    assert ci(ci_rig.job).wait.scope == "batch"
    with pytest.raises(RefusedError, match="only while it waits"):
        revert_batch(ci_rig.engine(), 1)


def red_tests(ci_rig: CiRig, sha: str) -> None:
    ci_rig.forge.failure_details["tests"] = CiFailure(
        "tests", "failure", TESTS_URL,
        annotations=(Annotation(AREA, 5, "AssertionError: 5 != 6"),),
        log_tail="collected 6 items\nFAILED tests/test_calc.py::test_area\n1 failed, 5 passed")
    ci_rig.forge.report_check(sha, "tests", conclusion="failure", url=TESTS_URL)


def test_green_milestone_opens_the_gate_with_each_check_and_the_job_completes(
        tmp_path: Path) -> None:
    ci_rig = rig(tmp_path)  # no ci.checks, no protection: every check on the commit but ours
    ci_rig.run(yes=True)
    sha = ci_rig.waiting_sha()
    ci_rig.forge.report_check(sha, "tests", "in_progress", None)
    ci_rig.forge.report_check(sha, "lint")
    outcome = ci_rig.run(max_steps=1)  # a CI webhook's step
    job = ci_rig.job
    assert outcome.exit_code == 0 and waiting_for_ci(job)
    assert ci(job).wait is not None and ci(job).wait.progress == "waiting for CI: 1 of 2 checks done"
    assert "waiting for CI: 1 of 2 checks done" in render_card(job)
    assert "waiting for CI: 1 of 2 checks done" in ci_rig.forge.published(Publication.PROGRESS)[-1]

    ci_rig.forge.report_check(sha, "tests", url="https://ci.example/tests/2")
    outcome = ci_rig.run()
    job = ci_rig.job
    assert job.gate is not None and job.gate.kind is Gate.MILESTONE and outcome.exit_code == 3
    assert ci(job).wait is None
    report = ci_rig.forge.published(Publication.MILESTONE_REPORT)[-1]
    assert f"CI on `{sha[:7]}` passed" in report
    assert "`tests` success (details: `https://ci.example/tests/2`)" in report
    assert "`lint` success" in report

    apply_verb(job, Verb.APPROVE)
    ci_rig.services.store.save(job)
    ci_rig.run()  # batch 3, then the last milestone's head waits before the final review
    last = ci_rig.waiting_sha()
    assert ci(ci_rig.job).wait is not None and ci(ci_rig.job).wait.number == 2
    ci_rig.forge.report_check(last, "tests")
    outcome = ci_rig.run()
    job = ci_rig.job
    assert (outcome.status, outcome.exit_code) == (JobStatus.COMPLETED, 0)
    assert [(r.number, r.state) for r in ci(job).results] == [(1, "passed"), (2, "passed")]
    note = render_note(job, now=ci_rig.clock(), voice=ci_rig.services.voice)
    assert "## The repository's CI" in note and f"CI on `{last[:7]}` passed" in note
    # Stepwise's own check runs: one per batch commit, and the job's, success at the end.
    for batch in job.batches:
        run = ci_rig.forge.check_runs[f"{job.id}:batch:{batch.number}"]
        assert (run.name, run.head_sha, run.conclusion) == (batch_check_name(batch.number),
                                                           batch.commit, "success")
    assert ci_rig.forge.check_runs[f"{job.id}:job"].conclusion == "success"


def test_red_milestone_names_the_batch_then_revert_waits_again_and_green_passes(
        tmp_path: Path) -> None:
    ci_rig = waiting_at_milestone_1(tmp_path)
    sha = ci_rig.waiting_sha()
    red_tests(ci_rig, sha)
    outcome = ci_rig.run(max_steps=1)
    job = ci_rig.job
    assert job.gate is not None and job.gate.kind == CI_FAILED and outcome.exit_code == 4
    assert job.gate.milestone == 1 and job.gate.report is not None
    assert job.gate.report.evidence["batches"] == [1]
    prompt = outcome.message
    for words in ("CI failed on milestone 1's head", "`tests` (failure)", TESTS_URL,
                  f"`{AREA}:5`: `AssertionError: 5 != 6`", "batch 1", "1 failed, 5 passed",
                  "stepwise approve", "stepwise retry"):
        assert words in prompt, words
    job_run = ci_rig.forge.check_runs[f"{job.id}:job"]
    assert job_run.conclusion == "action_required" and "/stepwise approve" in job_run.summary

    message = revert_batch(ci_rig.engine(), 1)
    job = ci_rig.job
    assert "reverted" in message and job.batch(1).status is BatchStatus.REVERTED
    assert job.gate is None and job.status is JobStatus.RUNNING and waiting_for_ci(job)
    new_head = ci_rig.waiting_sha()
    assert new_head != sha and new_head == job.head_sha == ci_rig.head()

    ci_rig.forge.report_check(new_head, "tests")
    outcome = ci_rig.run()
    job = ci_rig.job
    assert job.gate is not None and job.gate.kind is Gate.MILESTONE
    assert [(r.sha, r.state) for r in ci(job).results] == [(sha, "failed"), (new_head, "passed")]


def test_retry_at_ci_failed_re_runs_the_failed_checks_and_waits_for_the_new_run(
        tmp_path: Path) -> None:
    ci_rig = waiting_at_milestone_1(tmp_path)
    sha = ci_rig.waiting_sha()
    red_tests(ci_rig, sha)
    ci_rig.run()
    job = ci_rig.job
    assert apply_verb(job, Verb.RETRY).startswith("re-running the failed checks of milestone 1")
    ci_rig.services.store.save(job)
    outcome = ci_rig.run()
    assert ci_rig.forge.reruns == [(sha, ("tests",))]
    assert outcome.exit_code == 0 and waiting_for_ci(ci_rig.job)  # the old red run is not it
    ci_rig.forge.report_check(sha, "tests")  # the re-run, green
    ci_rig.run()
    job = ci_rig.job
    assert job.gate is not None and job.gate.kind is Gate.MILESTONE
    assert ci(job).results[0].retried and ci(job).results[-1].state == "passed"


def test_approve_at_ci_failed_accepts_it_and_the_note_names_it(tmp_path: Path) -> None:
    ci_rig = waiting_at_milestone_1(tmp_path)
    red_tests(ci_rig, ci_rig.waiting_sha())
    ci_rig.run()
    job = ci_rig.job
    assert "accepted as it is" in apply_verb(job, Verb.APPROVE)
    assert ci(job).wait is None and ci(job).results[-1].accepted
    ci_rig.services.store.save(job)
    ci_rig.run()
    job = ci_rig.job
    assert job.gate is not None and job.gate.kind is Gate.MILESTONE  # not asked again
    note = render_note(job, now=ci_rig.clock(), voice=ci_rig.services.voice)
    assert "Accepted although CI did not pass (`/stepwise approve` at the `ci_failed` gate): milestone 1" \
        in note
    assert "failed — accepted as is with `/stepwise approve`" in note


def test_a_check_that_never_finishes_opens_ci_failed_after_the_timeout(tmp_path: Path) -> None:
    ci_rig = waiting_at_milestone_1(tmp_path, timeout=30)
    sha = ci_rig.waiting_sha()
    ci_rig.forge.report_check(sha, "tests", "in_progress", None)
    ci_rig.clock.pass_minutes(29)
    assert ci_rig.run().exit_code == 0 and waiting_for_ci(ci_rig.job)
    ci_rig.clock.pass_minutes(2)
    outcome = ci_rig.run()
    job = ci_rig.job
    assert job.gate is not None and job.gate.kind == CI_FAILED and outcome.exit_code == 4
    assert "CI timed out waiting for `tests`" in job.gate.reason
    assert job.gate.report is not None and job.gate.report.code == "ci_timed_out"
    assert "after 30 min" in job.gate.report.message
    assert ci(job).results[-1].state == "timed_out"


def test_a_required_check_that_never_appears_times_out_too(tmp_path: Path) -> None:
    ci_rig = waiting_at_milestone_1(tmp_path, timeout=5)
    ci_rig.clock.pass_minutes(6)
    ci_rig.run()
    job = ci_rig.job
    assert job.gate is not None and job.gate.kind == CI_FAILED
    assert job.gate.report is not None and "`tests` (never reported)" in job.gate.report.message


def test_the_base_branch_required_checks_are_required_when_ci_checks_is_empty(
        tmp_path: Path) -> None:
    ci_rig = rig(tmp_path)
    ci_rig.forge.protected = ("build",)
    ci_rig.run(yes=True)
    sha = ci_rig.waiting_sha()
    ci_rig.forge.report_check(sha, "docs", conclusion="failure")  # not required: ignored
    assert ci_rig.run().exit_code == 0 and waiting_for_ci(ci_rig.job)
    ci_rig.forge.report_check(sha, "build")
    ci_rig.run()
    job = ci_rig.job
    assert job.gate is not None and job.gate.kind is Gate.MILESTONE
    assert ci(job).results[-1].required_from == "the base branch's required checks"


def test_cancel_while_waiting_for_ci_ends_the_job(tmp_path: Path) -> None:
    ci_rig = waiting_at_milestone_1(tmp_path)
    job = ci_rig.job
    apply_verb(job, Verb.CANCEL)
    assert job.status is JobStatus.CANCEL_REQUESTED and ci(job).wait is None and job.is_active
    ci_rig.services.store.save(job)
    outcome = ci_rig.run()
    assert (outcome.status, outcome.exit_code) == (JobStatus.CANCELLED, 5)
    assert ci_rig.forge.check_runs[f"{job.id}:job"].conclusion == "cancelled"


def test_per_milestone_notes_are_pushed_before_ci_so_the_gate_s_head_is_what_ci_ran(
        tmp_path: Path) -> None:
    ci_rig = rig(tmp_path, ci={"checks": ["tests"]}, notes="per_milestone")
    ci_rig.run(yes=False)
    apply_verb(job := ci_rig.job, Verb.APPROVE)
    ci_rig.services.store.save(job)
    ci_rig.run()
    job = ci_rig.job
    assert ci(job).wait is not None and ci(job).wait.scope == "milestone"
    assert ci(job).wait.sha == job.head_sha == job.note_commit  # the note went first
    ci_rig.forge.report_check(job.head_sha, "tests")
    ci_rig.run()
    job = ci_rig.job
    assert job.gate is not None and job.gate.kind is Gate.MILESTONE
    assert job.head_sha == job.note_commit  # one CI run for the milestone: its head


def test_at_end_notes_leave_the_milestone_head_to_the_last_batch(tmp_path: Path) -> None:
    ci_rig = waiting_at_milestone_1(tmp_path)
    job = ci_rig.job
    assert job.note_commit is None and job.head_sha == job.batch(2).commit
