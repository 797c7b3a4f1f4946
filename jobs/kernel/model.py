"""The job's state machine: the statuses, the job and batch transition tables with the one
`transition()` that applies them, and the gate table (when each gate opens, what passes it, the
other choices, its exit code, who may answer). The records they govern are in jobs/kernel/job.py.

A feature adds batch statuses of its own the way it adds gates (jobs/kernel/feature_parts.py
`BatchStatusRow`; CI: `awaiting_ci`, a pushed batch whose commit waits for CI's verdict): the
word is the feature's, stored and shown as it is, and becomes a member of `BatchStatus` with its
edges in BATCH_TRANSITIONS when the feature is installed (`add_batch_status`). That is smaller
than a generic kernel status with a feature's word on top, which would have changed the stored
records' word or put CI's word back in the kernel; the kernel reads a feature's status only
through its row (`feature_status`: it is not done yet; whether its commit passed locally).

The tables below and the Mermaid diagrams in docs/reference/state-machine.md change together.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Annotated, Protocol, overload

from pydantic import BeforeValidator

from jobs.basics.errors import StateError


class JobStatus(StrEnum):
    QUEUED = "queued"
    PLANNING = "planning"
    RUNNING = "running"
    AWAITING_HUMAN = "awaiting_human"
    COMPLETED = "completed"
    CANCEL_REQUESTED = "cancel_requested"
    CANCELLED = "cancelled"
    INTERRUPTED = "interrupted"
    FAILED = "failed"


class BatchStatus(StrEnum):
    PENDING = "pending"
    IN_PROGRESS = "in_progress"
    COMPLETED = "completed"
    FAILED = "failed"
    SKIPPED = "skipped"
    REVERTED = "reverted"

    @classmethod
    def _missing_(cls, value: object) -> BatchStatus | None:
        """An installed feature's status (`add_batch_status`), read from a record or a word."""
        return _FEATURE_MEMBERS.get(value) if isinstance(value, str) else None


@dataclass(frozen=True)
class BatchStatusRow:
    """A feature's batch status: its word (stored, and shown where a status is named), the
    statuses a batch enters it from and may leave it for, its mark on the card, whether its
    commit passed the batch's own validation (a pushed batch waiting for an outside verdict:
    bisect's sizing counts it), and the words a count of such batches is shown under in prose
    ("1 awaiting CI"; the word when none are given)."""

    word: str
    entered_from: frozenset[BatchStatus]
    leaves_to: frozenset[BatchStatus]
    mark: str
    validated: bool = False
    counted_as: str = ""

    @property
    def shown(self) -> str:
        """The words a count of this status is shown under ("awaiting CI")."""
        return self.counted_as or self.word


# The installed features' batch statuses by word, and their members of BatchStatus.
FEATURE_BATCH_STATUSES: dict[str, BatchStatusRow] = {}
_FEATURE_MEMBERS: dict[str, BatchStatus] = {}


class Gate(StrEnum):
    PLAN = "plan"
    MILESTONE = "milestone"
    SPEC_CHANGED = "spec_changed"
    LARGE_CHANGE = "large_change"
    DELETION = "deletion"
    SCOPE = "scope"
    FAILURE = "failure"
    HUMAN_COMMIT = "human_commit"
    INTERRUPTED = "interrupted"


class FailureCause(StrEnum):
    """Why a `failure` gate opened: each cause is one row of the pass table (jobs/kernel/
    gate_passes.py), so `approve` there has one meaning per cause. A feature adds causes of its
    own (jobs/kernel/feature_parts.py `FailureRow`; base_moves: `base_merge`)."""

    BATCH = "batch"  # a batch failed `max_failed_attempts` times: passing retries it
    FINAL_REVIEW = "final_review"  # the final review failed: `approve` finishes anyway
    FAULT = "fault"  # a fault outlasted its retries: passing resumes the job


class Acceptance(StrEnum):
    """What a passed gate lets the next step accept once (kept on the job until used)."""

    FAILED_REVIEW = "failed_review"  # `approve` at a failed final review: finish anyway
    BRANCH_HEAD = "branch_head"  # `approve` at `human_commit` or `conflict`: the pushed head


class Verb(StrEnum):
    """The human answers to a gate (revert and instruct are no answers: they work at any time)."""

    APPROVE = "approve"
    RETRY = "retry"
    SKIP = "skip"
    CANCEL = "cancel"


_J = JobStatus
JOB_TRANSITIONS: dict[JobStatus, frozenset[JobStatus]] = {
    _J.QUEUED: frozenset({_J.PLANNING, _J.CANCELLED, _J.FAILED, _J.INTERRUPTED}),
    _J.PLANNING: frozenset(
        {_J.AWAITING_HUMAN, _J.RUNNING, _J.CANCEL_REQUESTED, _J.FAILED, _J.INTERRUPTED}
    ),
    _J.RUNNING: frozenset(
        {_J.AWAITING_HUMAN, _J.COMPLETED, _J.CANCEL_REQUESTED, _J.FAILED, _J.INTERRUPTED}
    ),
    _J.AWAITING_HUMAN: frozenset({_J.RUNNING, _J.PLANNING, _J.CANCELLED, _J.FAILED}),
    _J.CANCEL_REQUESTED: frozenset({_J.CANCELLED, _J.FAILED}),
    _J.INTERRUPTED: frozenset(
        {_J.QUEUED, _J.PLANNING, _J.RUNNING, _J.AWAITING_HUMAN, _J.CANCELLED, _J.FAILED}
    ),
    _J.COMPLETED: frozenset(),
    # `/stepwise resume` (or a relabel) carries an ended job on, on its branch and pull request
    _J.CANCELLED: frozenset({_J.PLANNING, _J.RUNNING}),
    _J.FAILED: frozenset({_J.PLANNING, _J.RUNNING}),
}

_B = BatchStatus
BATCH_TRANSITIONS: dict[BatchStatus, frozenset[BatchStatus]] = {
    _B.PENDING: frozenset({_B.IN_PROGRESS, _B.COMPLETED, _B.SKIPPED}),
    _B.IN_PROGRESS: frozenset({_B.PENDING, _B.COMPLETED, _B.FAILED, _B.SKIPPED}),
    _B.FAILED: frozenset({_B.IN_PROGRESS, _B.PENDING, _B.SKIPPED, _B.COMPLETED}),
    # a commit left the branch (a rewrite the human accepted): the batch is done again
    _B.COMPLETED: frozenset({_B.REVERTED, _B.PENDING}),
    _B.SKIPPED: frozenset(),
    _B.REVERTED: frozenset(),
}

TERMINAL_JOB_STATUSES = frozenset({_J.COMPLETED, _J.CANCELLED, _J.FAILED})
# Active: a worker has something to do (every status but the terminal ones and a gate).
ACTIVE_JOB_STATUSES = frozenset(set(JobStatus) - TERMINAL_JOB_STATUSES - {_J.AWAITING_HUMAN})
FINISHED_BATCH_STATUSES = frozenset({_B.COMPLETED, _B.SKIPPED, _B.REVERTED})


def add_batch_status(row: BatchStatusRow) -> BatchStatus:
    """Make `row.word` a batch status, with its edges (jobs/kernel/feature_parts.py
    `install_parts` calls it); a word a status has already is refused (ValueError)."""
    if row.word in {s.value for s in batch_statuses()}:
        raise ValueError(f"batch status {row.word!r} is taken; give the feature's status a "
                         "word of its own")
    member = str.__new__(BatchStatus, row.word)
    member._name_, member._value_ = row.word.upper(), row.word
    _FEATURE_MEMBERS[row.word] = member
    FEATURE_BATCH_STATUSES[row.word] = row
    BATCH_TRANSITIONS[member] = row.leaves_to
    for status in row.entered_from:
        BATCH_TRANSITIONS[status] = BATCH_TRANSITIONS[status] | {member}
    return member


def remove_batch_status(word: str) -> None:
    """Take a feature's batch status out again (uninstalling it)."""
    row = FEATURE_BATCH_STATUSES.pop(word, None)
    member = _FEATURE_MEMBERS.pop(word, None)
    if row is None or member is None:
        return
    BATCH_TRANSITIONS.pop(member, None)
    for status in row.entered_from:
        BATCH_TRANSITIONS[status] = BATCH_TRANSITIONS[status] - {member}


def batch_statuses() -> list[BatchStatus]:
    """Every batch status: the built-in ones, then the installed features'."""
    return [*BatchStatus, *_FEATURE_MEMBERS.values()]


def feature_status(status: BatchStatus) -> BatchStatusRow | None:
    """The row of a feature's batch status (None for a built-in one)."""
    return FEATURE_BATCH_STATUSES.get(status.value)


@dataclass(frozen=True)
class GateRule:
    """One gate: when it opens, how to pass it, the other choices, its exit code, who answers."""

    opened_when: str
    verb: Verb  # the answer that passes it the usual way
    meaning: str  # what that answer does ("To <meaning>: `approve`")
    verbs: frozenset[Verb]  # every answer it takes besides cancel
    other_choices: tuple[str, ...]  # what the prompt offers besides `verb`, as usage lines
    exit_code: int  # local mode: 3 waits for a decision, 4 needs a human to fix or look
    lets_batch_through: bool = False  # approval lets one batch past a guard check
    # Who may answer: in server mode everyone who may steer the job (write, maintain or admin on
    # the repository, or the config's `approvers`; bot/authz.py); locally whoever runs the CLI.


_A, _R, _S = Verb.APPROVE, Verb.RETRY, Verb.SKIP
# Keyed by kind: a `Gate` for the built-in rows, the kind's name for a feature's row
# (jobs/kernel/feature_parts.py `install_parts` adds them at the composition root).
GATES: dict[str, GateRule] = {
    Gate.PLAN: GateRule("the plan is ready and needs approval (config, untrusted or drafted spec)",
                        _A, "start the job", frozenset({_A}), ("cancel",), 3),
    Gate.MILESTONE: GateRule("a milestone's batches are all done", _A,
                             "go on with the next milestone", frozenset({_A}),
                             ("cancel", "revert <batch>"), 3),
    Gate.SPEC_CHANGED: GateRule("the issue's spec changed after the plan was approved", _A,
                                "re-plan with the new spec", frozenset({_A}), ("cancel",), 3),
    Gate.LARGE_CHANGE: GateRule("a batch's diff is over `max_batch_lines`", _A,
                                "commit the large batch", frozenset({_A, _S}),
                                ("skip <reason>", "cancel"), 3, lets_batch_through=True),
    Gate.DELETION: GateRule("a batch deletes lines and `allow_deletions: ask`", _A,
                            "commit the batch with its deletions", frozenset({_A, _S}),
                            ("skip <reason>", "cancel"), 3, lets_batch_through=True),
    Gate.SCOPE: GateRule("an edit touches in-scope files outside the batch", _A,
                         "accept the wider batch", frozenset({_A, _R, _S}),
                         ("retry", "skip <reason>", "cancel"), 3, lets_batch_through=True),
    Gate.FAILURE: GateRule("a batch failed `max_failed_attempts` times, failed where its parent "
                           "commit fails too (not the edit's), a fault outlasted its retries, "
                           "or the final review failed", _R,
                           "retry the batch with the attempt counter reset",
                           frozenset({_A, _R, _S}), ("approve", "skip <reason>", "cancel"), 4),
    Gate.HUMAN_COMMIT: GateRule("the job branch holds a commit Stepwise did not make", _A,
                                "continue on top of the pushed commits", frozenset({_A}),
                                ("cancel",), 4),
    Gate.INTERRUPTED: GateRule("the job was interrupted three times in a row", _A,
                               "resume the job", frozenset({_A}), ("cancel",), 4),
}



def known_gate(value: object) -> object:
    """A stored or given gate kind: a built-in one as its `Gate`, an installed feature's by its
    name; anything else is refused, naming the kinds there are."""
    if isinstance(value, str) and value in GATES:
        return Gate(value) if value in Gate.__members__.values() else value
    raise ValueError(f"unknown gate kind {value!r}: one of {', '.join(GATES)} (a feature's gate "
                     "is known once the feature is installed where the process starts)")


# A gate's kind in a record: `Gate` for the built-in ones, a feature's own name for its gates.
GateKind = Annotated[Gate | str, BeforeValidator(known_gate)]

# The `failure` gate's causes: the built-in ones and the installed features' (their rows are in
# jobs/kernel/gate_passes.py FAILURE_PASSES; `install_parts` adds both).
FAILURE_CAUSES: set[str] = set(FailureCause)


def known_cause(value: object) -> object:
    """A stored or given cause of a `failure` gate: a built-in one as its `FailureCause`, an
    installed feature's by its name; anything else is refused, naming the causes there are."""
    if isinstance(value, str) and value in FAILURE_CAUSES:
        return FailureCause(value) if value in FailureCause.__members__.values() else value
    raise ValueError(f"unknown failure cause {value!r}: one of {', '.join(sorted(FAILURE_CAUSES))}"
                     " (a feature's cause is known once the feature is installed where the "
                     "process starts)")


# A `failure` gate's cause in a record: `FailureCause` for the built-in ones, a feature's name.
FailureCauseKind = Annotated[FailureCause | str, BeforeValidator(known_cause)]


def check_job_transition(current: JobStatus, new: JobStatus) -> None:
    if new not in JOB_TRANSITIONS[current]:
        raise StateError(
            f"illegal job transition {current} -> {new}",
            hint="this is a bug in Stepwise; the record was not changed",
        )


def check_batch_transition(current: BatchStatus, new: BatchStatus) -> None:
    if new not in BATCH_TRANSITIONS[current]:
        raise StateError(
            f"illegal batch transition {current} -> {new}",
            hint="this is a bug in Stepwise; the record was not changed",
        )


class _JobRecord(Protocol):
    """A job (jobs/kernel/job.py's `Job`, which imports this module: a protocol keeps the two
    free of a cycle)."""

    status: JobStatus


class _BatchRecord(Protocol):
    """A batch (jobs/kernel/job.py's `Batch`)."""

    status: BatchStatus


@overload
def transition(record: _JobRecord, new: JobStatus) -> None: ...


@overload
def transition(record: _BatchRecord, new: BatchStatus) -> None: ...


def transition(record: _JobRecord | _BatchRecord, new: JobStatus | BatchStatus) -> None:
    """The one way a job's or a batch's status changes: along an edge of its table, or StateError."""
    if isinstance(record.status, JobStatus):
        check_job_transition(record.status, JobStatus(new))
        record.status = JobStatus(new)
    else:
        check_batch_transition(record.status, BatchStatus(new))
        record.status = BatchStatus(new)


