"""`retry` at `ci_failed` when the forge cannot re-run a failed check (jobs/features/ci/rerun.py):
the gate opens again at once, saying what to press instead, and the job never waits for a
re-run nobody started; once the check runs again (started by hand), `retry` waits for it."""

from __future__ import annotations

from pathlib import Path

from jobs.features.ci.parts import CI_FAILED
from jobs.features.ci.record import ci, waiting_for_ci
from jobs.kernel.gates import Verb, apply_verb
from jobs.kernel.model import Gate, JobStatus
from tests.jobs.features.ci.test_ci_milestone import red_tests, waiting_at_milestone_1


def test_a_check_the_forge_cannot_re_run_keeps_the_gate_open_with_what_to_press(
        tmp_path: Path) -> None:
    ci_rig = waiting_at_milestone_1(tmp_path)
    sha = ci_rig.waiting_sha()
    red_tests(ci_rig, sha)
    ci_rig.run()
    job = ci_rig.job
    assert job.gate is not None and job.gate.kind == CI_FAILED
    ci_rig.forge.rerun_refused = {"tests"}
    apply_verb(job, Verb.RETRY)
    ci_rig.services.store.save(job)
    ci_rig.run()
    job = ci_rig.job
    assert ci_rig.forge.reruns == [(sha, ("tests",))]
    assert job.status is JobStatus.AWAITING_HUMAN and not waiting_for_ci(job)
    assert job.gate is not None and job.gate.kind == CI_FAILED
    assert "could not re-run every failed check of milestone 1" in job.gate.reason
    assert "- re-run `tests` by hand" in job.gate.reason
    assert job.gate.report is not None and "tests" in job.gate.report.message
    assert not ci(job).results[0].retried

    # Someone presses the button on GitHub: a new run is under way; `retry` now only waits.
    ci_rig.forge.report_check(sha, "tests", status="in_progress", conclusion=None)
    apply_verb(job, Verb.RETRY)
    ci_rig.services.store.save(job)
    ci_rig.run()
    assert ci_rig.forge.reruns == [(sha, ("tests",))]  # nothing asked again
    assert waiting_for_ci(ci_rig.job) and ci_rig.job.gate is None
    ci_rig.forge.report_check(sha, "tests")  # that run ends green
    ci_rig.run()
    job = ci_rig.job
    assert job.gate is not None and job.gate.kind is Gate.MILESTONE
