"""Taking a pushed commit back off the branch (`ci.wait: per_batch`): a batch whose commit CI
failed counts a failed attempt whose evidence is the red checks (then a split, a retry or the
`failure` gate), a batch skipped at `ci_failed` loses its commit, and a split's judged
candidate goes (jobs/features/bisect asks through `CANDIDATES`). The branch moves back to the
commit's parent under a lease on its sha; when someone pushed on top, the `human_commit` gate
opens instead.
"""

from __future__ import annotations

from typing import Literal

from jobs.adapters.workspace import WithdrawRefusedError
from jobs.decisions.ci import CiVerdict
from jobs.engine.context import JobContext
from jobs.features.ci.notes import attempt_failure, checks_of
from jobs.features.ci.port import ci_of
from jobs.features.ci.record import CiWait, CiWithdrawal, ci, ci_batch
from jobs.kernel.job import Batch
from jobs.kernel.model import BatchStatus, Gate
from jobs.notes.note_parts import short
from jobs.notes.progress import render_card
from jobs.ports import Publication

# Why the step stops after a withdrawal: "gate", one opened (failure, human_commit); "feature", a
# feature took the failure over (a split); None, the loop goes on.
Held = Literal["gate", "feature"] | None


def withdraw_failed(engine: JobContext, wait: CiWait, verdict: CiVerdict) -> Held:
    """per_batch, red: move the branch back to the candidate's parent (lease on its sha) and
    count a failed attempt whose evidence is the failing checks."""
    job = engine.job
    batch = job.batch(wait.number)
    failures = ci_of(engine).ci_failures(job, wait.sha, verdict.failing)
    error = attempt_failure(wait, verdict, failures)
    attempt = batch.last_attempt
    if attempt is not None:
        attempt.outcome, attempt.error = "ci_failed", error
        ci_batch(batch).withdrawn.append(CiWithdrawal(attempt=attempt.number, checks=[
            c for c in checks_of(verdict)
            if c.conclusion not in (None, "success", "neutral", "skipped")]))
    ci(job).wait = None
    batch.consecutive_failures += 1
    batch.set_status(BatchStatus.FAILED)
    if not take_back(engine, wait.sha, batch):
        return "gate"
    engine.event("attempt", f"batch {batch.number} attempt {attempt.number if attempt else '?'} "
                 f"withdrawn: {verdict.progress()}", batch.number)
    if any(hooks.batch_failed_ci(engine, batch, wait.sha, failures, error)
           for hooks in engine.batch_hooks()):
        return "feature"  # a multi-file batch is split (jobs/features/bisect)
    if batch.consecutive_failures >= job.config.max_failed_attempts:
        failures_n = batch.consecutive_failures
        engine.open(Gate.FAILURE, f"batch {batch.number} failed " + (
            "once" if failures_n == 1 else f"{failures_n} times in a row")
            + f"; the last attempt was withdrawn: {verdict.progress()}",
            batch=batch.number, report=error, touched=[batch.number])
        return "gate"
    engine.save(touched=[batch.number])
    engine.publish(Publication.PROGRESS, render_card(job))
    return None


def withdraw_skipped(engine: JobContext, wait: CiWait) -> Held:
    """`skip` at ci_failed (per_batch): take the skipped batch's commit back."""
    ci(engine.job).wait = None
    if not take_back(engine, wait.sha, engine.job.batch(wait.number)):
        return "gate"
    engine.save()
    return None


def take_back(engine: JobContext, sha: str, batch: Batch) -> bool:
    """End the wait and withdraw the candidate `sha`; False when the branch moved on top of it
    (then no rewrite, and the human_commit gate is open)."""
    ci(engine.job).wait = None
    job, repo = engine.job, engine.services.repository
    parent = repo.resolve(f"{sha}^") or job.base_sha
    why = "was skipped" if batch.status is BatchStatus.SKIPPED else "failed CI"
    try:
        if repo.branch_head(job.branch) != parent:  # else withdrawn before a worker died
            repo.withdraw(job.branch, sha, parent)
    except WithdrawRefusedError as exc:
        engine.open(Gate.HUMAN_COMMIT, f"batch {batch.number}'s commit `{short(sha)}` {why} "
                    f"and was to be withdrawn, but {exc.message}; approve to continue on top "
                    "of the pushed commits", touched=[batch.number])
        return False
    job.head_sha = parent
    batch.commit, batch.leftovers = None, []
    engine.event("withdraw", f"batch {batch.number}: {short(sha)} withdrawn, "
                 f"`{job.branch}` back at {short(parent)}", batch.number)
    return True
