"""The `ci_failed` gate's answers (jobs/kernel/gates.py), as pure changes to the record, and
the CI renderers (jobs/features/ci/notes.py) the card, the gate and the note show."""

from __future__ import annotations

from datetime import timedelta

import pytest

from jobs.decisions.ci import CheckObservation
from jobs.features.ci.notes import batches_named, failure_report, plan_ci_lines
from jobs.features.ci.parts import CI_FAILED
from jobs.features.ci.record import CiResult, CiWait, awaiting_ci, ci, ci_batch, waiting_for_ci
from jobs.features.ci.rules import CiRequirement, ci_verdict
from jobs.inputs.config import load_config
from jobs.kernel.gates import RefusedError, Verb, apply_verb, open_gate
from jobs.kernel.job import Job
from jobs.kernel.model import BatchStatus, JobStatus
from jobs.notes.annotations import Annotation
from jobs.notes.progress import gate_prompt, render_card
from jobs.ports import CiFailure
from tests.kit.records import T0, make_batch, make_job

SHA = "c" * 40


def at_ci_failed(scope: str = "milestone") -> Job:
    batches = [make_batch(1, status=BatchStatus.COMPLETED, files=["a.py"]),
               make_batch(2, status=BatchStatus.COMPLETED if scope == "milestone"
                          else awaiting_ci(), files=["b.py"])]
    batches[0].commit, batches[1].commit = "1" * 40, SHA
    job = make_job(batches=batches, status=JobStatus.RUNNING)
    number = 1 if scope == "milestone" else 2
    ci(job).wait = CiWait(sha=SHA, since=T0, scope=scope, number=number)  # type: ignore[arg-type]
    result = CiResult(scope=scope, number=number, sha=SHA, state="failed", at=T0)  # type: ignore[arg-type]
    if scope == "batch":
        ci_batch(job.batch(number)).results = [result]
    else:
        ci(job).results = [result]
    open_gate(job, CI_FAILED, reason="CI failed: `tests`", now=T0,
              milestone=number if scope == "milestone" else None,
              batch=number if scope == "batch" else None)
    return job


def test_approve_accepts_the_milestone_result_and_stops_waiting() -> None:
    job = at_ci_failed()
    message = apply_verb(job, Verb.APPROVE)
    assert message == "the CI failure of milestone 1 is accepted as it is (named in the note)"
    assert job.status is JobStatus.RUNNING and job.gate is None and ci(job).wait is None
    assert ci(job).results[0].accepted


def test_approve_completes_an_awaiting_batch() -> None:
    job = at_ci_failed("batch")
    apply_verb(job, Verb.APPROVE)
    assert job.batch(2).status is BatchStatus.COMPLETED and ci_batch(job.batch(2)).results[0].accepted


def test_retry_keeps_waiting_and_asks_for_a_re_run() -> None:
    job = at_ci_failed()
    assert apply_verb(job, Verb.RETRY).startswith("re-running the failed checks of milestone 1")
    assert waiting_for_ci(job) and ci(job).wait is not None and ci(job).wait.rerun
    assert not ci(job).results[0].accepted


def test_skip_skips_an_awaiting_batch_and_the_milestone_gate_has_no_batch_to_skip() -> None:
    job = at_ci_failed("batch")
    apply_verb(job, Verb.SKIP, reason="flaky upstream")
    assert job.batch(2).status is BatchStatus.SKIPPED
    assert ci(job).wait is not None  # the engine withdraws the candidate next
    with pytest.raises(RefusedError, match="not about one batch"):
        apply_verb(at_ci_failed(), Verb.SKIP, reason="x")


def test_cancel_at_ci_failed_ends_the_wait() -> None:
    job = at_ci_failed()
    apply_verb(job, Verb.CANCEL)
    assert job.status is JobStatus.CANCELLED and ci(job).wait is None


def test_the_prompt_offers_every_answer_and_exits_4() -> None:
    job = at_ci_failed()
    prompt = gate_prompt(job)
    assert "To accept the red CI result as it is (the note names it): `stepwise approve`" in prompt
    for other in ("stepwise retry", "stepwise skip REASON", "stepwise revert BATCH",
                  "stepwise cancel"):
        assert other in prompt
    assert job.gate is not None and job.gate.exit_code == 4


def test_the_failure_report_names_checks_annotations_log_tail_and_batches() -> None:
    job = at_ci_failed()
    assert ci(job).wait is not None
    red = CheckObservation("tests", "completed", "failure", "https://ci.example/7", run_id=1)
    verdict = ci_verdict(CiRequirement(configured=("tests",)), [red], waiting_since=T0, now=T0,
                         timeout=timedelta(minutes=60))
    failure = CiFailure("tests", "failure", "https://ci.example/7",
                        annotations=(Annotation("b.py", 4, "assert 1 == 2"),),
                        log_tail="\n".join(f"line {n}" for n in range(100)))
    report = failure_report(job, ci(job).wait, verdict, [failure])
    assert report.code == "ci_failed"
    assert "CI failed on milestone 1's head `ccccccc`: `tests` (failure)" in report.message
    assert "`b.py:4`: `assert 1 == 2`" in report.message and "batch 2" in report.message
    assert report.evidence["batches"] == [2]
    tail = report.evidence["output_tail"]
    assert "line 99" in tail and "line 69" not in tail  # the last 30 lines only
    assert batches_named(job, [Annotation("elsewhere.py", 1, "x")], milestone=1) == []


def test_the_card_shows_what_ci_is_doing_per_milestone_and_per_batch() -> None:
    job = at_ci_failed("batch")
    apply_verb(job, Verb.RETRY)
    assert ci(job).wait is not None
    ci(job).wait.progress = "waiting for CI: 3 of 5 checks done"
    card = render_card(job)
    assert "Now waiting for CI: 3 of 5 checks done on `ccccccc` (batch 2)." in card
    assert "batch 2: awaiting_ci" in card and "— waiting for CI: 3 of 5 checks done" in card
    ci(job).wait = None
    ci(job).results.append(CiResult(scope="milestone", number=1, sha=SHA, state="passed", at=T0))
    card = render_card(job, fold_finished=False)
    assert "- CI on `ccccccc` passed: no checks reported" in card


@pytest.mark.parametrize(("config", "extra", "line"), [
    ("ci: {wait: off}", {}, "- CI: not waited for (`ci.wait: off`)"),
    ("", {}, "- CI is not used in local mode (`ci.wait: per_milestone` applies to server mode"),
    ("", {"installation_id": 5}, "- CI: waits for the base branch's required checks (else every "
     "check on the commit) on each milestone's head (`ci.wait: per_milestone`, timeout 60 min)"),
])
def test_the_plan_says_what_ci_does(config: str, extra: dict[str, int], line: str) -> None:
    job = make_job()
    job.config = load_config(config)
    job.server.installation_id = extra.get("installation_id")
    assert any(item.startswith(line) for item in plan_ci_lines(job))
