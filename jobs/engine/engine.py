"""The loop: advances a job step by step (a status -> handler table), saving after every step,
until a gate or the end.

The steps live beside it: start (a new job), planning, batch_run (an attempt and its record),
review (the final review), revert, endings (failed, cancelled); each applies decisions that
the pure rooms (jobs/decisions, jobs/kernel) compute. The features' hooks (the moved base merged
in, CI's verdict, ...) run at the loop's named points. `Engine` is the `JobContext` the loop runs in.
"""

from __future__ import annotations

from collections.abc import Callable

from jobs.basics.errors import ErrorInfo, RetryClass, StepwiseError
from jobs.engine import endings, review
from jobs.engine.baseline import recheck_baseline
from jobs.engine.batch_run import changed_nothing, milestone_gate, milestone_note, run_batch
from jobs.engine.context import (
    EXIT_CANCELLED,
    EXIT_COMPLETED,
    EXIT_FAILED,
    Base,
    CancelSignal,
    Feature,
    JobContext,
    Outcome,
    SafePointHook,
    Services,
    outcome_of,
)
from jobs.engine.planning import plan
from jobs.engine.start import create_job, local_base, resume_message
from jobs.kernel.gates import Verb, apply_verb
from jobs.kernel.job import Job
from jobs.kernel.model import BatchStatus, Gate, JobStatus
from jobs.notes.note_parts import baseline_failure
from jobs.ports import Publication
from jobs.recipes.base import CommandCancelled

__all__ = ["EXIT_CANCELLED", "EXIT_COMPLETED", "EXIT_FAILED", "Base", "Engine", "Feature", "Outcome",
           "Services", "create_job", "local_base", "outcome_of"]

# What one step does for each status: None to go on, an outcome to stop the loop with.
Handler = Callable[["Engine"], Outcome | None]


class Engine(JobContext):
    """Advances one job; owns its worktree for the life of the object."""

    def __init__(self, services: Services, job: Job, *, auto_approve: bool = False) -> None:
        super().__init__(services, job)
        self.auto_approve = auto_approve

    def run(self, *, max_steps: int | None = None) -> Outcome:
        """Run until the job reaches a gate or ends (or `max_steps` steps were taken).

        The record is saved after every step; a job stopped by `max_steps` (or waiting for CI)
        is still `running` and its outcome's exit code is 0. The `Stepwise` check run then
        shows where the job stopped.
        """
        outcome = self._steps(max_steps)
        self.run_hooks("after_steps")
        return outcome

    def _steps(self, max_steps: int | None) -> Outcome:
        steps = 0
        try:
            while True:
                if max_steps is not None and steps >= max_steps and not self.job.is_terminal \
                        and self.job.status is not JobStatus.AWAITING_HUMAN:
                    return Outcome(self.job.status, 0, f"job is {self.job.status}")
                steps += 1
                outcome = STEPS[self.job.status](self)
                if outcome is not None:
                    return outcome
        except (CancelSignal, CommandCancelled):
            return endings.finish_cancel(self)
        except StepwiseError as exc:
            if exc.retry_class is RetryClass.DO_NOT_RETRY:
                return endings.fail(self, exc.info())
            raise
        finally:
            self.close()

    def outcome(self) -> Outcome:
        return outcome_of(self.job, voice=self.services.voice)

    def auto_pass(self) -> bool:
        """With --yes: pass a plan or milestone gate (never one shown for a failing baseline)."""
        gate = self.job.gate
        if not self.auto_approve or gate is None or gate.kind not in (Gate.PLAN, Gate.MILESTONE):
            return False
        if gate.kind is Gate.PLAN and self.job.baseline_ok is False:
            # A failing baseline is shown to a human, never waved through: say so.
            self.publish(Publication.NOTICE, "--yes does not pass the plan gate: "
                         + baseline_failure(self.job))
            return False
        self.event("gate", f"{gate.id} passed by --yes")
        apply_verb(self.job, Verb.APPROVE)
        self.save(touched=())
        self.publish(Publication.NOTICE, f"gate {gate.id} passed (--yes)")
        return True

    def fail(self, error: ErrorInfo) -> Outcome:
        return endings.fail(self, error)

    def cancel_now(self) -> Outcome:
        """Record a cancellation made while nothing was running, with the note."""
        try:
            outcome = endings.finish_cancel(self)
            self.run_hooks("after_steps")
            return outcome
        finally:
            self.close()


def _waiting(engine: Engine) -> Outcome | None:
    return None if engine.auto_pass() else engine.outcome()


def _ended(engine: Engine) -> Outcome:
    return engine.outcome()


def _cancel_requested(engine: Engine) -> Outcome:
    raise CancelSignal


def _interrupted(engine: Engine) -> Outcome | None:
    job = engine.job
    job.set_status(JobStatus.RUNNING if job.approved_digest else JobStatus.PLANNING)
    engine.publish(Publication.RESUMED, resume_message(job))
    return STEPS[job.status](engine)


def _queued(engine: Engine) -> Outcome | None:
    engine.job.set_status(JobStatus.PLANNING)
    engine.save(touched=())
    plan(engine)
    return None


def _planning(engine: Engine) -> None:
    plan(engine)


def _cancel(engine: JobContext) -> None:
    engine.check_cancel()  # raises CancelSignal when the stored record asks for it


# What happens at the safe point, in order, before a running job's next piece of work (see
# SafePointHook): a cancel asked for; then the features' `safe_point` hooks in the order of the
# features' tuple (jobs/composition.py: CI's verdict, the branch read again, the moved base
# merged, ...).
SAFE_POINT: tuple[SafePointHook, ...] = (_cancel,)


def _running(engine: Engine) -> Outcome | None:
    """The safe point's hooks, then the next piece of work: a batch, a milestone end or the end."""
    features = engine.features()
    for hook in SAFE_POINT + tuple(f.safe_point for f in features if f.safe_point is not None):
        taken = hook(engine)
        if isinstance(taken, Outcome):
            return taken
        if taken:
            return None
    job = engine.job
    pending = [b for b in job.batches if b.status in (BatchStatus.PENDING,
               BatchStatus.IN_PROGRESS, BatchStatus.FAILED)]
    if not pending:
        milestone_note(engine, job.milestone_count)
        if (waits := _before_milestone_end(engine, job.milestone_count)) is not None:
            return waits
        review.finish(engine)
        return None
    if job.baseline_ok is False:
        recheck_baseline(engine)  # approved while the baseline failed: is it fixed now?
        return None
    batch = pending[0]
    previous = batch.milestone - 1
    if previous >= 1 and previous not in job.approved_milestones:
        if changed_nothing(engine, previous):
            return None
        milestone_note(engine, previous)
        if (waits := _before_milestone_end(engine, previous)) is not None:
            return waits
        if previous not in job.approved_milestones:  # a hook may pass it (known edit shapes)
            milestone_gate(engine, previous)
        return None
    if any(hooks.before_batch(engine, batch) for hooks in engine.batch_hooks()):
        return None  # a feature took the step (a split to resume, sizes to choose)
    run_batch(engine, batch)
    return None


def _before_milestone_end(engine: Engine, milestone: int) -> Outcome | None:
    """The features' `before_milestone_end` hooks (CI's wait for the milestone's head, ...):
    the first that holds the milestone stops the loop."""
    for feature in engine.features():
        if feature.before_milestone_end is not None and \
                (held := feature.before_milestone_end(engine, milestone)) is not None:
            return held
    return None


STEPS: dict[JobStatus, Handler] = {
    JobStatus.QUEUED: _queued,
    JobStatus.PLANNING: _planning,
    JobStatus.RUNNING: _running,
    JobStatus.INTERRUPTED: _interrupted,
    JobStatus.AWAITING_HUMAN: _waiting,
    JobStatus.CANCEL_REQUESTED: _cancel_requested,
    JobStatus.COMPLETED: _ended,
    JobStatus.CANCELLED: _ended,
    JobStatus.FAILED: _ended,
}
