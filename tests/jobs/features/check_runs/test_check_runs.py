"""Stepwise's own check runs (jobs/features/check_runs/, a server-only feature): `Stepwise /
batch K` carries the validation evidence and the earlier failed attempts' annotations;
`Stepwise` follows the job and is sent again only when what it says changed. Local mode has
none."""

from __future__ import annotations

from pathlib import Path

from jobs.features.check_runs import publish as ci_checks
from jobs.features.ci.record import ci
from jobs.kernel.gates import Verb, apply_verb
from jobs.kernel.model import JobStatus
from jobs.kernel.records import Attempt, CommandEvidence
from jobs.notes.check_runs import JobCheckState
from tests.jobs.features.ci.ci_kit import rig

MYPY_OUT = 'calc/alpha/area.py:3: error: Name "new_sum" is not defined  [name-defined]\n' \
    "/tmp/stepwise/repo/calc/alpha/perimeter.py:4: error: Too many arguments  [call-arg]\n" \
    "Found 2 errors in 2 files"


def test_the_batch_check_shows_the_evidence_and_annotates_the_earlier_failures(
        tmp_path: Path) -> None:
    ci_rig = rig(tmp_path)
    ci_rig.run(yes=True)
    engine = ci_rig.engine()
    batch = engine.job.batch(1)
    failed = Attempt(number=1, started_at=ci_rig.clock(), outcome="failed", commands=[
        CommandEvidence(argv=["mypy", "calc"], exit_code=1, duration_s=1.5,
                        output_tail=MYPY_OUT)])
    batch.attempts = [failed, *batch.attempts]
    try:
        ci_checks.publish_batch_check(engine, batch)
    finally:
        engine.close()
    run = ci_rig.forge.check_runs[f"{engine.job.id}:batch:1"]
    assert run.head_sha == batch.commit and run.conclusion == "success"
    assert "1 earlier failed attempt before this one" in run.summary
    assert "| `mypy calc` | 1 | 1.5 s |" in run.summary
    assert "python -m unittest discover -s tests -q" in run.summary
    assert [(a.path, a.line, a.level) for a in run.annotations] == [
        ("calc/alpha/area.py", 3, "warning"), ("calc/alpha/perimeter.py", 4, "warning")]
    assert run.payload()["output"]["annotations"][0]["start_line"] == 3


def test_the_job_check_follows_the_job_and_is_sent_on_change_only(tmp_path: Path) -> None:
    ci_rig = rig(tmp_path)
    outcome = ci_rig.run()  # at the plan gate: nothing is pushed, no check run yet
    assert outcome.exit_code == 3 and ci_rig.forge.check_runs == {}
    job = ci_rig.job
    apply_verb(job, Verb.APPROVE)
    ci_rig.services.store.save(job)
    ci_rig.run()  # batches 1-2, then waiting for CI
    key = f"{job.id}:job"
    run = ci_rig.forge.check_runs[key]
    assert (run.status, run.conclusion) == ("in_progress", None)
    assert run.head_sha == ci_rig.job.head_sha
    assert run.title == "waiting for CI: no check has started yet"  # the wait's own line
    quiet = ci_rig.job.model_copy(deep=True)  # a wait without its line yet names the commit
    wait = ci(quiet).wait
    assert wait is not None
    wait.progress = ""
    assert ci_checks.job_check_state(quiet) == (
        JobCheckState.WORKING, f"job is waiting for CI on {wait.sha[:7]}", "")
    ci_rig.forge.check_runs.clear()
    ci_rig.run()  # nothing changed: the same run is not sent again
    assert ci_rig.forge.check_runs == {}
    ci_rig.forge.report_check(ci_rig.waiting_sha(), "tests")
    ci_rig.run()  # the milestone gate
    run = ci_rig.forge.check_runs[key]
    assert (run.status, run.conclusion) == ("completed", "action_required")
    assert "/stepwise approve" in run.summary and "Waiting at gate `milestone`" in run.title
    assert ci_rig.job.status is JobStatus.AWAITING_HUMAN
