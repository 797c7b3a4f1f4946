"""Waiting for the repository's CI (server mode): starting a wait on a pushed commit, the hooks
the loop calls at its named points (jobs/features/ci/wiring.py) and what the verdict does.

A job that waits for CI stays `running` with `ci(job).wait` set and holds no worker: each later
step (queued by a CI webhook on the wait's commit, or by the reconciler) is the safe-point hook,
which reads the forge's report, computes the verdict (rules.py) and either keeps waiting, goes
on, opens `ci_failed`, or (`ci.wait: per_batch`) withdraws the red candidate as a failed
attempt (withdraw.py). Local mode has no CI (`forge.ci_report` is None): nothing here waits
there, and `active` keeps a local job out of the hooks.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Literal

from jobs.decisions.ci import CiState, CiVerdict
from jobs.engine.context import JobContext, Outcome, outcome_of
from jobs.features.ci.notes import checks_of, failure_report, scope_words
from jobs.features.ci.parts import CI_FAILED
from jobs.features.ci.port import ci_of
from jobs.features.ci.record import (
    AWAITING_CI,
    CiResult,
    CiWait,
    awaiting_ci,
    ci,
    ci_batch,
    results_of,
    start_wait,
    waiting_for_ci,
)
from jobs.features.ci.rerun import rerun_failed
from jobs.features.ci.rules import WORKFLOWS_DIR, CiRequirement, ci_verdict, expects_ci
from jobs.features.ci.withdraw import Held, withdraw_failed, withdraw_skipped
from jobs.kernel.job import Batch, Job
from jobs.kernel.model import BatchStatus, JobStatus
from jobs.notes.note_parts import short
from jobs.notes.progress import render_card
from jobs.ports import CiReport, Publication

Scope = Literal["milestone", "batch"]


def begin(engine: JobContext, *, scope: Scope, number: int, sha: str) -> bool:
    """Start waiting for CI on `sha`; False when this forge has no CI (local mode)."""
    job = engine.job
    report = ci_of(engine).ci_report(job, sha)
    if report is None:
        return False
    if not _has_ci(engine, report, sha):
        engine.event("ci", f"no CI in this repository ({NO_CI_SIGNS}): {short(sha)} "
                     "is not waited for")
        return False
    # The same commit again (a deterministic batch redone after its withdrawal): the runs that
    # rejected it before are not its verdict now; the runs its new push starts are.
    seen_before = any(r.sha == sha and r.state != CiState.PASSED
                      for r in results_of(job, scope, number))
    stale = [f"{o.name}#{o.run_id}" for o in report.observed if o.run_id] if seen_before else []
    start_wait(job, CiWait(sha=sha, since=engine.now(), scope=scope, number=number,
                           rerun_of=stale))
    engine.event("ci", f"waiting for CI on {short(sha)} ({scope_words(scope, number)})")
    return True


def begin_candidate(engine: JobContext, batch: Batch, sha: str) -> bool:
    """A split's candidate commit of `batch` (jobs/features/bisect/by_ci.py): wait for CI on
    it, the batch `awaiting_ci` meanwhile; False when this forge has no CI."""
    if not begin(engine, scope="batch", number=batch.number, sha=sha):
        return False
    batch.set_status(awaiting_ci())
    return True


NO_CI_SIGNS = ("no required or named checks, no workflow files, no checks on the base's head")


def _has_ci(engine: JobContext, report: CiReport, sha: str) -> bool:
    """`expects_ci`, reading the commit's workflow files and then the base head's checks only
    when what is already known does not decide it."""
    job = engine.job
    need = requirement(job, report)
    if expects_ci(need, on_commit=report.observed, on_base=(), workflow_files=()):
        return True
    workflows = engine.services.repository.git(
        "ls-tree", "--name-only", f"{sha}:{WORKFLOWS_DIR}", check=False).split()
    if expects_ci(need, on_commit=(), on_base=(), workflow_files=workflows):
        return True
    base = ci_of(engine).ci_report(job, job.base_sha)
    return base is not None and expects_ci(need, on_commit=(), on_base=base.observed,
                                           workflow_files=())


# -- the hooks ---------------------------------------------------------------------------------

def active(job: Job) -> bool:
    """A job waiting for CI, or one that will (server mode, `ci.wait` not `off`); a local job
    or one with `ci.wait: off` runs none of the hooks."""
    return ci(job).wait is not None or (job.config.ci.waits and
                                       job.server.installation_id is not None)


def before_milestone_end(engine: JobContext, milestone: int) -> Outcome | None:
    """per_milestone: before the milestone gate (or the final review of the last milestone),
    wait until the milestone head's required checks finish. None: go on now."""
    job = engine.job
    if job.config.ci.wait != "per_milestone" or settled(job, milestone):
        return None
    if not any(b.commit for b in job.milestone_batches(milestone)):
        return None  # nothing of this milestone was pushed: no CI to wait for
    if not begin(engine, scope="milestone", number=milestone, sha=job.head_sha):
        return None
    engine.save(touched=())
    return check(engine)


def settled(job: Job, milestone: int) -> bool:
    """The milestone's head (as it is now) passed CI, or its failure was accepted."""
    return any(r.sha == job.head_sha and (r.state == CiState.PASSED or r.accepted)
               for r in results_of(job, "milestone", milestone))


def after_push(engine: JobContext, batch: Batch) -> None:
    """per_batch: a pushed batch waits for its commit's checks (`awaiting_ci`, its wait
    recorded with it); else the engine completes it."""
    if engine.job.config.ci.wait == "per_batch" and \
            begin(engine, scope="batch", number=batch.number, sha=batch.commit or
                  engine.job.head_sha):
        batch.set_status(awaiting_ci())


def adopted(engine: JobContext, batch: Batch, sha: str) -> BatchStatus | None:
    """A batch commit found on the branch (its worker died between push and record): in
    per_batch mode it is a candidate waiting for its checks, never completed (None: the
    engine completes it)."""
    if engine.job.config.ci.wait == "per_batch" and sha == engine.services.repository.\
            branch_head(engine.job.branch) and \
            begin(engine, scope="batch", number=batch.number, sha=sha):
        return awaiting_ci()
    return None


def after_revert(engine: JobContext) -> None:
    """`revert K` at the ci_failed gate, or while a milestone waits for CI: the gate closes and
    the job waits for CI on the new head (same milestone or batch)."""
    job, wait = engine.job, ci(engine.job).wait
    at_gate = job.gate is not None and job.gate.kind == CI_FAILED
    if wait is None or not (at_gate or waiting_for_ci(job)):
        return
    if at_gate:
        job.gate = None
        job.set_status(JobStatus.RUNNING)
    start_wait(job, CiWait(sha=job.head_sha, since=engine.now(), scope=wait.scope,
                           number=wait.number))
    engine.event("ci", f"reverted {'at ci_failed' if at_gate else 'while waiting for CI'}: "
                 f"waiting for CI on {short(job.head_sha)}")
    engine.save()


def at_safe_point(engine: JobContext) -> Outcome | bool:
    """While waiting for CI, its verdict is the step."""
    if ci(engine.job).wait is None:
        return False
    return check(engine) or True


# -- a look at CI: its verdict and what it does ------------------------------------------------

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
    wait = ci(engine.job).wait
    progress = wait.progress if wait is not None and wait.progress else "waiting for CI"
    return Outcome(engine.job.status, 0, progress)


def check(engine: JobContext) -> Outcome | None:
    """One look at CI for the job's wait. An outcome: stop this step (still waiting, or a gate
    opened); None: the wait is over and the loop goes on."""
    job = engine.job
    wait = ci(job).wait
    assert wait is not None
    forge = ci_of(engine)
    if wait.scope == "batch":
        batch = next((b for b in job.batches if b.number == wait.number), None)
        if batch is not None and batch.status is BatchStatus.SKIPPED:
            return _after_withdrawal(engine, withdraw_skipped(engine, wait))  # `skip` at ci_failed
        if batch is None or batch.status != AWAITING_CI:  # re-planned away
            ci(job).wait = None
            engine.save()
            return None
    report = forge.ci_report(job, wait.sha)
    if report is None:  # the forge has no CI any more (a server job resumed locally)
        ci(job).wait = None
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
            hooks.candidate_checked(engine, job.batch(wait.number), wait.sha, verdict)
            for hooks in engine.batch_hooks()):
        return after_feature(engine)  # a split's candidate (jobs/features/bisect)
    _record(engine, wait, verdict)
    if verdict.state is CiState.PASSED:
        _passed(engine, wait)
        return None
    if wait.scope == "batch" and verdict.state is CiState.FAILED:
        return _after_withdrawal(engine, withdraw_failed(engine, wait, verdict))
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
    if ci(job).wait is not None:
        return waiting(engine)
    return outcome(engine) if job.gate is not None else None


def _after_withdrawal(engine: JobContext, held: Held) -> Outcome | None:
    if held == "feature":
        return after_feature(engine)
    return outcome(engine) if held == "gate" else None


def _note_progress(engine: JobContext, wait: CiWait, verdict: CiVerdict) -> None:
    progress = verdict.progress()
    changed = progress != wait.progress or checks_of(verdict) != wait.checks
    wait.progress, wait.checks, wait.checked_at = progress, checks_of(verdict), engine.now()
    engine.save(touched=())
    if changed:
        engine.publish(Publication.PROGRESS, render_card(engine.job))


def _record(engine: JobContext, wait: CiWait, verdict: CiVerdict) -> None:
    job = engine.job
    kept = ci_batch(job.batch(wait.number)).results if wait.scope == "batch" else ci(job).results
    kept.append(CiResult(
        scope=wait.scope, number=wait.number, sha=wait.sha, state=str(verdict.state),
        at=engine.now(), checks=checks_of(verdict), required_from=str(verdict.required_from)))
    wait.progress, wait.checks, wait.checked_at = verdict.progress(), checks_of(verdict), \
        engine.now()
    engine.event("ci", f"{scope_words(wait.scope, wait.number)}: {verdict.progress()}",
                 wait.number if wait.scope == "batch" else None)


def _passed(engine: JobContext, wait: CiWait) -> None:
    job = engine.job
    ci(job).wait = None
    touched: list[int] = []
    if wait.scope == "batch":
        batch = job.batch(wait.number)
        if batch.status == AWAITING_CI:
            batch.set_status(BatchStatus.COMPLETED)
        touched = [batch.number]
    engine.save(touched=touched)
    engine.publish(Publication.PROGRESS, render_card(job))
