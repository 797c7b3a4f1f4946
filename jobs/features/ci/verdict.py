"""What CI's verdict on the commit a job waits for does (server mode): keep waiting (the card
shows its progress), go on, open `ci_failed`, or (`ci.wait: per_batch`) withdraw the red
candidate as a failed attempt. One look per step: `check`, which the safe-point hook and the
end of a milestone call (wait.py).
"""

from __future__ import annotations

from datetime import timedelta

from jobs.adapters.workspace import WithdrawRefusedError
from jobs.domain.ci import CiState, CiVerdict
from jobs.domain.job import Batch, Job
from jobs.domain.model import BatchStatus, Gate
from jobs.domain.note_parts import short
from jobs.domain.notes import render_card
from jobs.domain.records import CiResult, CiWait
from jobs.engine.context import JobContext, Outcome, outcome_of
from jobs.features.ci.notes import attempt_failure, checks_of, failure_report, scope_words
from jobs.features.ci.parts import CI_FAILED
from jobs.features.ci.rerun import rerun_failed
from jobs.features.ci.rules import CiRequirement, ci_verdict
from jobs.ports import CiReport, Publication


def requirement(job: Job, report: CiReport) -> CiRequirement:
    """`ci.checks`, else the base branch's required checks, else what is seen but our own."""
    return CiRequirement(configured=tuple(job.config.ci.checks), protected=report.protected,
                         own_app_id=report.own_app_id)


def verdict_of(engine: JobContext, wait: CiWait, report: CiReport) -> CiVerdict:
    """The verdict now; the runs a `retry` re-requested no longer count (their re-runs do)."""
    observed = [o for o in report.observed if not o.run_id or
                f"{o.name}#{o.run_id}" not in wait.rerun_of]
    return ci_verdict(requirement(engine.job, report), observed,
                      waiting_since=wait.since, now=engine.now(),
                      timeout=timedelta(minutes=engine.job.config.ci.timeout))


def waiting(engine: JobContext) -> Outcome:
    wait = engine.job.ci_wait
    progress = wait.progress if wait is not None and wait.progress else "waiting for CI"
    return Outcome(engine.job.status, 0, progress)


def check(engine: JobContext) -> Outcome | None:
    """One look at CI for the job's wait. An outcome: stop this step (still waiting, or a gate
    opened); None: the wait is over and the loop goes on."""
    job = engine.job
    wait = job.ci_wait
    assert wait is not None
    forge = engine.services.forge
    if wait.scope == "batch":
        batch = next((b for b in job.batches if b.number == wait.number), None)
        if batch is not None and batch.status is BatchStatus.SKIPPED:
            return _withdraw_skipped(engine, wait)  # `skip` at ci_failed: take it back
        if batch is None or batch.status is not BatchStatus.AWAITING_CI:  # re-planned away
            job.ci_wait = None
            engine.save()
            return None
    report = forge.ci_report(job, wait.sha)
    if report is None:  # the forge has no CI any more (a server job resumed locally)
        job.ci_wait = None
        if wait.scope == "batch":
            job.batch(wait.number).set_status(BatchStatus.COMPLETED)
        engine.save()
        return None
    verdict = verdict_of(engine, wait, report)
    refused = None
    if wait.rerun:  # `retry` at ci_failed
        refused = rerun_failed(engine, wait, verdict, scope_words(wait.scope, wait.number))
        verdict = verdict_of(engine, wait, report)
    if refused is not None:  # the gate stays open: nothing would re-run them
        failures = forge.ci_failures(job, wait.sha, verdict.failing)
        engine.open(CI_FAILED, refused,
                    batch=wait.number if wait.scope == "batch" else None,
                    milestone=wait.number if wait.scope == "milestone" else None,
                    report=failure_report(job, wait, verdict, failures))
        return outcome(engine)
    if verdict.state is CiState.PENDING:
        _note_progress(engine, wait, verdict)
        return waiting(engine)
    if wait.scope == "batch" and any(
            hooks.candidate_checked(engine, job.batch(wait.number), wait, verdict)
            for hooks in engine.batch_hooks()):
        return after_feature(engine)  # a split's candidate (jobs/features/bisect)
    _record(engine, wait, verdict)
    if verdict.state is CiState.PASSED:
        _passed(engine, wait)
        return None
    if wait.scope == "batch" and verdict.state is CiState.FAILED:
        return _withdraw_failed(engine, wait, verdict)
    failures = forge.ci_failures(job, wait.sha, verdict.failing)
    engine.open(CI_FAILED, f"{verdict.progress()} ({scope_words(wait.scope, wait.number)})",
                batch=wait.number if wait.scope == "batch" else None,
                milestone=wait.number if wait.scope == "milestone" else None,
                report=failure_report(job, wait, verdict, failures))
    return outcome(engine)


def outcome(engine: JobContext) -> Outcome:
    return outcome_of(engine.job, voice=engine.services.voice)


def after_feature(engine: JobContext) -> Outcome | None:
    """A feature took CI's verdict over: wait again, stop at the gate it opened, or go on."""
    job = engine.job
    if job.ci_wait is not None:
        return waiting(engine)
    return outcome(engine) if job.gate is not None else None


def _note_progress(engine: JobContext, wait: CiWait, verdict: CiVerdict) -> None:
    progress = verdict.progress()
    changed = progress != wait.progress or checks_of(verdict) != wait.checks
    wait.progress, wait.checks, wait.checked_at = progress, checks_of(verdict), engine.now()
    engine.save(touched=())
    if changed:
        engine.publish(Publication.PROGRESS, render_card(engine.job))


def _record(engine: JobContext, wait: CiWait, verdict: CiVerdict) -> None:
    job = engine.job
    kept = job.batch(wait.number).ci_results if wait.scope == "batch" else job.ci_results
    kept.append(CiResult(
        scope=wait.scope, number=wait.number, sha=wait.sha, state=str(verdict.state),
        at=engine.now(), checks=checks_of(verdict), required_from=str(verdict.required_from)))
    wait.progress, wait.checks, wait.checked_at = verdict.progress(), checks_of(verdict), \
        engine.now()
    engine.event("ci", f"{scope_words(wait.scope, wait.number)}: {verdict.progress()}",
                 wait.number if wait.scope == "batch" else None)


def _passed(engine: JobContext, wait: CiWait) -> None:
    job = engine.job
    job.ci_wait = None
    touched: list[int] = []
    if wait.scope == "batch":
        batch = job.batch(wait.number)
        if batch.status is BatchStatus.AWAITING_CI:
            batch.set_status(BatchStatus.COMPLETED)
        touched = [batch.number]
    engine.save(touched=touched)
    engine.publish(Publication.PROGRESS, render_card(job))


def _withdraw_failed(engine: JobContext, wait: CiWait, verdict: CiVerdict) -> Outcome | None:
    """per_batch, red: move the branch back to the candidate's parent (lease on its sha) and
    count a failed attempt whose evidence is the failing checks."""
    job = engine.job
    batch = job.batch(wait.number)
    failures = engine.services.forge.ci_failures(job, wait.sha, verdict.failing)
    error = attempt_failure(wait, verdict, failures)
    attempt = batch.last_attempt
    if attempt is not None:
        attempt.outcome, attempt.error = "ci_failed", error
        attempt.ci_checks = [c for c in checks_of(verdict) if c.conclusion not in
                             (None, "success", "neutral", "skipped")]
    job.ci_wait = None
    batch.consecutive_failures += 1
    batch.set_status(BatchStatus.FAILED)
    if not take_back(engine, wait, batch):
        return outcome(engine)
    engine.event("attempt", f"batch {batch.number} attempt {attempt.number if attempt else '?'} "
                 f"withdrawn: {verdict.progress()}", batch.number)
    if any(hooks.batch_failed_ci(engine, batch, wait, failures, error)
           for hooks in engine.batch_hooks()):
        return after_feature(engine)  # a multi-file batch is split (jobs/features/bisect)
    if batch.consecutive_failures >= job.config.max_failed_attempts:
        failures_n = batch.consecutive_failures
        engine.open(Gate.FAILURE, f"batch {batch.number} failed " + (
            "once" if failures_n == 1 else f"{failures_n} times in a row")
            + f"; the last attempt was withdrawn: {verdict.progress()}",
            batch=batch.number, report=error, touched=[batch.number])
        return outcome(engine)
    engine.save(touched=[batch.number])
    engine.publish(Publication.PROGRESS, render_card(job))
    return None


def _withdraw_skipped(engine: JobContext, wait: CiWait) -> Outcome | None:
    engine.job.ci_wait = None
    if not take_back(engine, wait, engine.job.batch(wait.number)):
        return outcome(engine)
    engine.save()
    return None


def take_back(engine: JobContext, wait: CiWait, batch: Batch) -> bool:
    """Withdraw the candidate (`wait.sha`); False when the branch moved on top of it (then no rewrite, and
    the human_commit gate is open)."""
    job, repo = engine.job, engine.services.repository
    parent = repo.resolve(f"{wait.sha}^") or job.base_sha
    why = "was skipped" if batch.status is BatchStatus.SKIPPED else "failed CI"
    try:
        if repo.branch_head(job.branch) != parent:  # else withdrawn before a worker died
            repo.withdraw(job.branch, wait.sha, parent)
    except WithdrawRefusedError as exc:
        engine.open(Gate.HUMAN_COMMIT, f"batch {batch.number}'s commit `{short(wait.sha)}` {why} "
                    f"and was to be withdrawn, but {exc.message}; approve to continue on top "
                    "of the pushed commits", touched=[batch.number])
        return False
    job.head_sha = parent
    batch.commit, batch.leftovers = None, []
    engine.event("withdraw", f"batch {batch.number}: {short(wait.sha)} withdrawn, "
                 f"`{job.branch}` back at {short(parent)}", batch.number)
    return True
