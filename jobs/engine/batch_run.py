"""The batch steps: run the next batch's attempt and record its outcome; a milestone's gate."""

from __future__ import annotations

import shlex

from jobs.basics.errors import ErrorInfo
from jobs.decisions.blame import NOT_THE_EDITS, Cause
from jobs.engine.attempt import NOTHING_TO_CHANGE, AttemptOutcome, Result
from jobs.engine.attempt_outcome import record_changes
from jobs.engine.baseline import forget_reused_baseline
from jobs.engine.context import JobContext
from jobs.engine.note_commit import commit_note
from jobs.inputs.recipes import rules_for
from jobs.kernel.gates import open_gate
from jobs.kernel.job import Batch
from jobs.kernel.model import BatchStatus, Gate
from jobs.kernel.records import Attempt
from jobs.notes.progress import files_label, render_card
from jobs.ports import Publication

# Failures that come out the same however often they are tried: the failure gate opens at once.
# A model may answer differently next time (it is told why), so for recipe llm only a refused
# program counts; `replace` and `command` edit the same way every time, so their validation
# failure repeats too: a multi-file batch is split (jobs/features/bisect), a single file goes to
# the failure gate at once (a flaky test is for a human to `retry`; a timeout is retried).
DETERMINISTIC_FAILURES = frozenset({"guard_refused", "edit_changed_nothing", "targets_remain",
                                    "command_refused", "validation_failed"})
DETERMINISTIC_FOR_LLM = frozenset({"command_refused"})


def timeout_words(attempt: Attempt, error: ErrorInfo | None, limit: int) -> str:
    """"; `cmd` timed out ... command_timeout" when the attempt failed on a timeout, else ""."""
    timed = next((c.display for c in attempt.commands if c.timed_out), None)
    edit = (error.evidence.get("command") if error else None) or {}
    if timed is None and isinstance(edit, dict) and edit.get("timed_out"):
        timed = shlex.join(str(arg) for arg in edit.get("argv", []))
    if timed is None:
        return ""
    return (f"; `{timed}` timed out (command_timeout is {limit} s in .github/stepwise.yml: "
            "raise it if the command needs longer)")


def milestone_note(engine: JobContext, milestone: int) -> None:
    """`notes: per_milestone`: the milestone's note commit, before CI runs on the milestone's
    head (once: a head that is already the note commit is left as it is)."""
    job = engine.job
    if job.config.notes == "per_milestone" and job.note_commit != job.head_sha:
        commit_note(engine, f"milestone {milestone}/{job.milestone_count}")


def changed_nothing(engine: JobContext, milestone: int) -> bool:
    """A milestone none of whose batches changed a file (each skipped) has nothing to look at:
    it is passed without a gate, and one line says so."""
    job = engine.job
    batches = [b for b in job.batches if b.milestone == milestone]
    if not batches or any(b.status is not BatchStatus.SKIPPED for b in batches):
        return False
    them = "its batch" if len(batches) == 1 else f"its {len(batches)} batches"
    why = "had nothing to change" if all(b.reason.startswith(NOTHING_TO_CHANGE)
                                         for b in batches) else "were skipped"
    words = (f"milestone {milestone} of {job.milestone_count} changed nothing ({them} {why}); "
             "no gate opened for it")
    job.approved_milestones.append(milestone)
    engine.event("milestone", words)
    engine.save(touched=())
    engine.publish(Publication.NOTICE, words)
    return True


def milestone_gate(engine: JobContext, milestone: int) -> None:
    reason = f"milestone {milestone} of {engine.job.milestone_count} is done"
    # The report shows the gate the job is about to wait at, not `running`; it is published
    # before the gate is saved, so a failed publication is retried with the step.
    waiting = engine.job.model_copy()  # shallow: open_gate only sets fields of the copy
    open_gate(waiting, Gate.MILESTONE, reason=reason, now=engine.now(), milestone=milestone)
    engine.publish(Publication.MILESTONE_REPORT, render_card(waiting, fold_finished=False,
                                                           with_prompt=False))
    engine.open(Gate.MILESTONE, reason, milestone=milestone, touched=())

def run_batch(engine: JobContext, batch: Batch) -> None:
    job = engine.job
    if batch.status is not BatchStatus.IN_PROGRESS:
        batch.set_status(BatchStatus.IN_PROGRESS)
    stale = batch.last_attempt
    if stale is not None and stale.finished_at is None:  # its worker died mid-attempt
        stale.outcome, stale.finished_at = "interrupted", engine.now()
    attempt = Attempt(number=len(batch.attempts) + 1, started_at=engine.now())
    batch.attempts.append(attempt)
    # Not durable: a crash that loses it leaves the batch as it was before, and the next run
    # adopts a commit the attempt made (branch_sync) or runs the batch again; the record at
    # the attempt's end is durable (tests/jobs/engine/test_recovery.py).
    engine.save(touched=[batch.number], durable=False)
    engine.publish(Publication.NOTICE, f"batch {batch.number}/{len(job.batches)} "
                 f"(attempt {attempt.number}): {files_label(batch.files)}")
    outcome = engine.runner.run(job, batch, attempt)
    attempt.finished_at = engine.now()
    attempt.outcome = outcome.result.value
    record(engine, batch, attempt, outcome)

def record(engine: JobContext, batch: Batch, attempt: Attempt, outcome: AttemptOutcome) -> None:
    job = engine.job
    touched = [batch.number, *outcome.touched]
    if outcome.result is Result.COMMITTED:
        job.head_sha = outcome.commit or job.head_sha
        batch.commit, batch.leftovers = outcome.commit, outcome.leftovers
        record_changes(engine.services.repository, job, batch, attempt, outcome.changed)
        batch.consecutive_failures = 0
        before = batch.status
        for feature in engine.features():
            if feature.after_push is not None:
                feature.after_push(engine, batch)
        if batch.status is before:  # no feature held it (CI per_batch: `awaiting_ci`)
            batch.set_status(BatchStatus.COMPLETED)
        engine.event("batch", f"batch {batch.number} committed", batch.number)
        engine.save(touched=touched)
        engine.publish(Publication.PROGRESS, render_card(job))
        for feature in engine.features():
            if feature.committed is not None:
                feature.committed(engine, batch)
    elif outcome.result is Result.SKIPPED:
        batch.set_status(BatchStatus.SKIPPED)
        batch.reason = outcome.reason
        engine.event("batch", f"batch {batch.number} skipped: {outcome.reason}", batch.number)
        engine.save(touched=touched)
    elif outcome.result is Result.GATED and outcome.gate is not None:
        batch.set_status(BatchStatus.PENDING)
        limit = f" (the limit: max_batch_lines is {job.config.max_batch_lines} in " \
            ".github/stepwise.yml)" if outcome.gate is Gate.LARGE_CHANGE else ""
        engine.open(outcome.gate, f"batch {batch.number}: {outcome.reason}{limit}",
                  batch=batch.number, touched=touched)
    else:
        attempt.error = outcome.error
        code = outcome.error.code if outcome.error else ""
        batch.set_status(BatchStatus.FAILED)
        engine.event("attempt", f"batch {batch.number} attempt {attempt.number} failed: "
                   f"{code or 'unknown'}", batch.number)
        if code in NOT_THE_EDITS.values():  # not counted against the edit: a human fixes it
            if code == NOT_THE_EDITS[Cause.ENVIRONMENT]:
                forget_reused_baseline(engine)
            engine.open(Gate.FAILURE, outcome.reason, batch=batch.number, report=outcome.error,
                        touched=touched)
            return
        batch.consecutive_failures += 1
        if any(hooks.batch_failed(engine, batch, attempt, outcome)
               for hooks in engine.batch_hooks()):
            return  # a multi-file batch failed validation: a feature splits it (jobs/features)
        deterministic = DETERMINISTIC_FAILURES if rules_for(job.spec.recipe).deterministic \
            else DETERMINISTIC_FOR_LLM
        timed_out = any(c.timed_out for c in attempt.commands)
        if code in deterministic and not timed_out:
            engine.open(Gate.FAILURE, f"batch {batch.number} failed with `{code}`, which "
                      "would fail the same way again, so it is not retried",
                      batch=batch.number, report=outcome.error, touched=touched)
        elif batch.consecutive_failures >= job.config.max_failed_attempts:
            failures = batch.consecutive_failures
            engine.open(Gate.FAILURE, f"batch {batch.number} failed " + (
                      "once" if failures == 1 else f"{failures} times in a row")
                      + timeout_words(attempt, outcome.error, job.config.command_timeout),
                      batch=batch.number, report=outcome.error, touched=touched)
        else:
            engine.save(touched=touched)

