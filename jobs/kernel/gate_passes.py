"""What passing each gate does, as a table (pure): one row per gate kind, and for `failure` one
sub-row per typed cause (`OpenGate.cause`), so passing a gate is a lookup, never a chain of
conditions on report codes. The gate table in jobs/kernel/model.py says when each gate opens and
what it takes; this one what its passing changes in the record. Each row returns the sentence
that tells the person what happened.

The rows are applied by `apply_verb` (jobs/kernel/gates.py) after the answers every gate shares:
`skip` of a paused batch, and a gate opened before any plan existed (passing it plans again).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from jobs.kernel.job import Batch, Job, OpenGate
from jobs.kernel.model import Acceptance, FailureCause, Gate, JobStatus, Verb

# A row's action: the job (already `running` again, unless the row plans), the gate, the
# answer and the gate's batch (None when the gate is not about one); what happened, in words.
OnPass = Callable[[Job, OpenGate, Verb, Batch | None], str]


@dataclass(frozen=True)
class PassRow:
    """What passing one gate (or one cause of `failure`) does. `resumes`: the status the job
    goes on in; `approve_means`: at a `failure` cause, what `approve` does when it is more than
    a retry (the prompt then recommends it, jobs/kernel/gates.py)."""

    on_pass: OnPass
    resumes: JobStatus = JobStatus.RUNNING
    approve_means: str = ""


def passed(_job: Job, gate: OpenGate, _verb: Verb, _batch: Batch | None) -> str:
    return f"gate {gate.kind} passed"


def _plan(job: Job, _gate: OpenGate, _verb: Verb, _batch: Batch | None) -> str:
    job.approved_digest = job.spec_digest
    return "plan approved"


def _milestone(job: Job, gate: OpenGate, verb: Verb, batch: Batch | None) -> str:
    if gate.milestone is None:
        return passed(job, gate, verb, batch)
    job.approved_milestones.append(gate.milestone)
    return f"milestone {gate.milestone} approved"


def _spec_changed(_job: Job, _gate: OpenGate, _verb: Verb, _batch: Batch | None) -> str:
    return "re-planning with the changed spec"


def _batch_check(job: Job, gate: OpenGate, verb: Verb, batch: Batch | None) -> str:
    """`large_change`, `deletion`, `scope`: `approve` lets the batch past that check once."""
    if batch is None:
        return passed(job, gate, verb, batch)
    if verb is Verb.APPROVE:
        batch.approved_gates.append(gate.kind)
        return f"batch {batch.number}: {gate.kind} accepted"
    return f"batch {batch.number} will be retried"


def _failed_batch(job: Job, gate: OpenGate, verb: Verb, batch: Batch | None) -> str:
    if batch is None:
        return passed(job, gate, verb, batch)
    batch.consecutive_failures = 0
    return f"batch {batch.number} will be retried (attempt counter reset)"


def _failed_review(job: Job, gate: OpenGate, verb: Verb, batch: Batch | None) -> str:
    if verb is not Verb.APPROVE:
        return passed(job, gate, verb, batch)  # `retry`: the review runs again
    job.accept(Acceptance.FAILED_REVIEW)  # what the gate's hint promises: finish anyway
    return "finishing although the final review did not pass"


# Keyed by cause: a feature's rows are added with its causes (jobs/kernel/feature_parts.py).
FAILURE_PASSES: dict[str, PassRow] = {
    FailureCause.BATCH: PassRow(_failed_batch),
    FailureCause.FINAL_REVIEW: PassRow(
        _failed_review, approve_means="finish although the final review did not pass"),
    FailureCause.FAULT: PassRow(passed),
}


def _failure(job: Job, gate: OpenGate, verb: Verb, batch: Batch | None) -> str:
    return failure_row(gate).on_pass(job, gate, verb, batch)


def failure_row(gate: OpenGate) -> PassRow:
    """The sub-row of a `failure` gate, by its cause (a gate of another kind: the fault row)."""
    return FAILURE_PASSES[gate.cause or FailureCause.FAULT]


def _human_commit(job: Job, _gate: OpenGate, _verb: Verb, _batch: Batch | None) -> str:
    job.accept(Acceptance.BRANCH_HEAD)
    return "continuing on top of the pushed commits"


# Keyed like the gate table (jobs/kernel/model.py GATES): a feature's rows are added with it.
PASSES: dict[str, PassRow] = {
    Gate.PLAN: PassRow(_plan),
    Gate.MILESTONE: PassRow(_milestone),
    Gate.SPEC_CHANGED: PassRow(_spec_changed, resumes=JobStatus.PLANNING),
    Gate.LARGE_CHANGE: PassRow(_batch_check),
    Gate.DELETION: PassRow(_batch_check),
    Gate.SCOPE: PassRow(_batch_check),
    Gate.FAILURE: PassRow(_failure),
    Gate.HUMAN_COMMIT: PassRow(_human_commit),
    Gate.INTERRUPTED: PassRow(passed),
}


def pass_gate(job: Job, gate: OpenGate, verb: Verb, batch: Batch | None) -> str:
    """Pass `gate` with `verb`: the job resumes as its row says, then the row's action runs."""
    row = PASSES[gate.kind]
    job.set_status(row.resumes)
    return row.on_pass(job, gate, verb, batch)
