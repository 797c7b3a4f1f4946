"""Waiting for the repository's CI (server mode): starting a wait on a pushed commit and the
hooks the loop calls at its named points (jobs/features/ci/wiring.py).

A job that waits for CI stays `running` with `job.ci_wait` set and holds no worker: each later
step (queued by a CI webhook on `ci_wait.sha`, or by the reconciler) is the safe-point hook,
which reads the forge's report and lets its verdict decide (verdict.py). Local mode has no CI
(`forge.ci_report` is None): nothing here waits there.
"""

from __future__ import annotations

from typing import Literal

from jobs.domain.ci import CiState
from jobs.domain.job import Batch, Job
from jobs.domain.model import BatchStatus, JobStatus
from jobs.domain.note_parts import short
from jobs.domain.records import CiWait
from jobs.engine.context import JobContext, Outcome
from jobs.features.ci.notes import scope_words
from jobs.features.ci.parts import CI_FAILED
from jobs.features.ci.rules import WORKFLOWS_DIR, expects_ci
from jobs.features.ci.verdict import check, requirement
from jobs.ports import CiReport

Scope = Literal["milestone", "batch"]


def begin(engine: JobContext, *, scope: Scope, number: int, sha: str) -> bool:
    """Start waiting for CI on `sha`; False when this forge has no CI (local mode)."""
    job = engine.job
    report = engine.services.forge.ci_report(job, sha)
    if report is None:
        return False
    if not _has_ci(engine, report, sha):
        engine.event("ci", f"no CI in this repository ({NO_CI_SIGNS}): {short(sha)} "
                     "is not waited for")
        return False
    # The same commit again (a deterministic batch redone after its withdrawal): the runs that
    # rejected it before are not its verdict now; the runs its new push starts are.
    seen_before = any(r.sha == sha and r.state != CiState.PASSED
                      for r in job.ci_results_of(scope, number))
    stale = [f"{o.name}#{o.run_id}" for o in report.observed if o.run_id] if seen_before else []
    job.ci_wait = CiWait(sha=sha, since=engine.now(), scope=scope, number=number,
                         rerun_of=stale)
    engine.event("ci", f"waiting for CI on {short(sha)} ({scope_words(scope, number)})")
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
    base = engine.services.forge.ci_report(job, job.base_sha)
    return base is not None and expects_ci(need, on_commit=(), on_base=base.observed,
                                           workflow_files=())


# -- the hooks ---------------------------------------------------------------------------------

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
               for r in job.ci_results_of("milestone", milestone))


def after_push(engine: JobContext, batch: Batch) -> None:
    """per_batch: a pushed batch waits for its commit's checks (`awaiting_ci`, its wait
    recorded with it); else the engine completes it."""
    if engine.job.config.ci.wait == "per_batch" and \
            begin(engine, scope="batch", number=batch.number, sha=batch.commit or
                  engine.job.head_sha):
        batch.set_status(BatchStatus.AWAITING_CI)


def adopted(engine: JobContext, batch: Batch, sha: str) -> BatchStatus | None:
    """A batch commit found on the branch (its worker died between push and record): in
    per_batch mode it is a candidate waiting for its checks, never completed (None: the
    engine completes it)."""
    if engine.job.config.ci.wait == "per_batch" and sha == engine.services.repository.\
            branch_head(engine.job.branch) and \
            begin(engine, scope="batch", number=batch.number, sha=sha):
        return BatchStatus.AWAITING_CI
    return None


def after_revert(engine: JobContext) -> None:
    """`revert K` at the ci_failed gate, or while a milestone waits for CI: the gate closes and
    the job waits for CI on the new head (same milestone or batch)."""
    job, wait = engine.job, engine.job.ci_wait
    at_gate = job.gate is not None and job.gate.kind == CI_FAILED
    if wait is None or not (at_gate or job.waiting_for_ci):
        return
    if at_gate:
        job.gate = None
        job.set_status(JobStatus.RUNNING)
    job.ci_wait = CiWait(sha=job.head_sha, since=engine.now(), scope=wait.scope,
                         number=wait.number)
    engine.event("ci", f"reverted {'at ci_failed' if at_gate else 'while waiting for CI'}: "
                 f"waiting for CI on {short(job.head_sha)}")
    engine.save()


def at_safe_point(engine: JobContext) -> Outcome | bool:
    """While waiting for CI, its verdict is the step."""
    if engine.job.ci_wait is None:
        return False
    return check(engine) or True
