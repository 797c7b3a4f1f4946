"""What an attempt lends the llm editor (the feature's `edit` hook): check a candidate in place,
restore, count calls, the previous attempt's failure as feedback; the `budget` gate when the
token budget is spent; where the attempt's transcript is."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from jobs.engine.attempt import AttemptRunner
from jobs.engine.attempt_outcome import EditGated
from jobs.engine.context import JobContext
from jobs.engine.discovery import never_in_scope
from jobs.features.llm.budget import BUDGET
from jobs.features.llm.usage import record_usage, usage
from jobs.inputs.globs import matches_any
from jobs.inputs.spec import DoneWhen
from jobs.kernel.job import Batch, Job
from jobs.kernel.records import Attempt, ModelCall
from jobs.recipes.base import (
    BudgetSpentError,
    CandidateReport,
    EditHooks,
    EditRequest,
    EditResult,
)
from jobs.recipes.llm.accounting import transcript_path
from jobs.recipes.llm.feedback import (
    UNCHANGED,
    command_feedback,
    commands_ran,
    guard_feedback,
    previous_attempt,
    targets_feedback,
)


def edit(engine: JobContext, batch: Batch, attempt: Attempt, request: EditRequest,
         apply: Callable[[EditRequest], EditResult]) -> EditResult:
    """The attempt's edit with the editor's extras: the hooks bound to this attempt and why the
    previous attempt failed; a spent budget stops the batch at the `budget` gate; the
    transcript's place is recorded however the edit ended."""
    runner, job = engine.runner, engine.job
    previous = batch.attempts[-2].error if len(batch.attempts) > 1 else None
    feedback = previous_attempt(previous.message, previous.evidence.get("output_tail")) \
        if previous else None
    try:
        return apply(replace(request, feedback=feedback,
                             hooks=make_hooks(runner, job, batch, attempt)))
    except BudgetSpentError as exc:
        usage(job).budget_gate_batch = batch.number  # settled when the batch runs again
        raise EditGated(BUDGET, exc.message) from exc
    finally:
        transcript_link(runner, job, batch, attempt)


def make_hooks(runner: AttemptRunner, job: Job, batch: Batch, attempt: Attempt) -> EditHooks:
    """Hooks bound to this attempt; the check is the runner's own guard, validation and
    completion check, so what the editor sees is what the runner will decide."""

    def record(call: ModelCall) -> None:
        attempt.llm_calls.append(call)
        record_usage(job, call)

    return EditHooks(
        check=lambda: check_candidate(runner, job, batch),
        restore=lambda: runner.worktree.reset(job.head_sha),
        record_call=record,
        notify=runner.notify,
        tokens_used=usage(job).tokens,
        budget_grants=usage(job).budget_grants,
        transcript=transcript_path(runner.repository.state_dir, job.number, batch.number,
                                   attempt.number),
        title=f"Stepwise #{job.number} — {job.title} — batch {batch.number}, attempt "
              f"{attempt.number} (job {job.id})",
        readable=readable_files(runner, job),
        llm_config=job.config.llm,
    )


REGULAR_MODES = ("100644", "100755")


def readable_files(runner: AttemptRunner, job: Job) -> tuple[str, ...]:
    """The tracked regular files at the job's head that no scope rule protects (no links,
    submodules, change notes, `.env*`, keys or other `protected_paths`)."""
    if job.spec.recipe != "llm" and job.spec.fallback != "llm":
        return ()
    never = never_in_scope(job.config)
    modes = runner.repository.tracked_modes(job.head_sha)
    return tuple(sorted(path for path, mode in modes.items()
                        if mode in REGULAR_MODES and not matches_any(path, never)))


def check_candidate(runner: AttemptRunner, job: Job, batch: Batch) -> CandidateReport:
    """Stage the worktree and judge it: guard, setup and validation (once per tree), targets."""
    worktree = runner.worktree
    worktree.stage_all()
    if not worktree.staged_paths():
        return CandidateReport(False, "unchanged", UNCHANGED)
    verdict = runner.check(job, batch)
    if not verdict.ok:
        kind = "gate" if verdict.gate is not None else "guard_refused"
        return CandidateReport(False, kind, guard_feedback(verdict, batch.files))
    tree = worktree.write_tree()
    evidence, failure, kind = runner.validate(job, tree)
    ran = commands_ran(evidence, failure, kind=kind, planned=job.config.validate_commands)
    # Leave the files exactly as validated: what the commands wrote (caches, build output) must
    # not be staged with the edit when the runner stages the worktree again.
    worktree.restore(tree)
    if failure is not None:
        return CandidateReport(False, kind, f"Ran: {ran}.\n" + command_feedback(failure, kind))
    if job.spec.done_when is DoneWhen.NO_MATCHES:
        left = [str(target) for target in runner.remaining(job, tree, batch.files)]
        if left:
            return CandidateReport(False, "targets_remain",
                                   f"Ran: {ran}.\n" + targets_feedback(left))
    return CandidateReport(True, feedback=f"ran: {ran}")


def transcript_link(runner: AttemptRunner, job: Job, batch: Batch, attempt: Attempt) -> None:
    """Record where this attempt's transcript is, if the editor wrote one."""
    path = transcript_path(runner.repository.state_dir, job.number, batch.number, attempt.number)
    if path.is_file():
        try:
            attempt.transcript = str(path.relative_to(runner.repository.root))
        except ValueError:
            attempt.transcript = str(path)
