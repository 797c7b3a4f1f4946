"""The job record: statuses, gates, batches, attempts and evidence, with explicit transition tables.

The tables below and the Mermaid diagrams in README.md ("State machine") change together.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from jobs.config import RepoConfig
from jobs.errors import ErrorInfo, StateError
from jobs.spec import TaskSpec


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
    BUDGET = "budget"


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
    _J.CANCELLED: frozenset(),
    _J.FAILED: frozenset(),
}

_B = BatchStatus
BATCH_TRANSITIONS: dict[BatchStatus, frozenset[BatchStatus]] = {
    _B.PENDING: frozenset({_B.IN_PROGRESS, _B.COMPLETED, _B.SKIPPED}),
    _B.IN_PROGRESS: frozenset({_B.PENDING, _B.COMPLETED, _B.FAILED, _B.SKIPPED}),
    _B.FAILED: frozenset({_B.IN_PROGRESS, _B.PENDING, _B.SKIPPED, _B.COMPLETED}),
    _B.COMPLETED: frozenset({_B.REVERTED}),
    _B.SKIPPED: frozenset(),
    _B.REVERTED: frozenset(),
}

TERMINAL_JOB_STATUSES = frozenset({_J.COMPLETED, _J.CANCELLED, _J.FAILED})
FINISHED_BATCH_STATUSES = frozenset({_B.COMPLETED, _B.SKIPPED, _B.REVERTED})

# Local exit code of each gate: 3 waits for a decision, 4 needs a human to fix or look.
GATE_EXIT_CODES: dict[Gate, int] = {
    Gate.PLAN: 3,
    Gate.MILESTONE: 3,
    Gate.SPEC_CHANGED: 3,
    Gate.LARGE_CHANGE: 3,
    Gate.DELETION: 3,
    Gate.SCOPE: 3,
    Gate.FAILURE: 4,
    Gate.HUMAN_COMMIT: 4,
    Gate.INTERRUPTED: 4,
    Gate.BUDGET: 4,
}

# Gates whose approval lets one batch through a guard check it would otherwise stop at.
BATCH_GATES = frozenset({Gate.LARGE_CHANGE, Gate.DELETION, Gate.SCOPE})


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


class Record(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class Target(Record):
    """One place a `find` pattern matched: `path:line`."""

    path: str
    line: int

    def __str__(self) -> str:
        return f"{self.path}:{self.line}"


class CommandEvidence(Record):
    """What one command did: the proof a batch was validated."""

    argv: list[str]
    exit_code: int
    duration_s: float
    output_tail: str = ""
    output_lines: int = 0
    timed_out: bool = False
    isolated: bool = False
    egress: list[str] = []  # each tunnel asked of the egress proxy, and its answer

    @property
    def display(self) -> str:
        return " ".join(self.argv)


class ModelCall(Record):
    """One request to the language model: what it cost and what became of its answer."""

    model: str
    round: int = 1
    files: list[str] = []
    tokens_in: int = 0
    tokens_out: int = 0
    latency_s: float = 0.0
    finish_reason: str = ""
    # validated | parse_error | apply_failed | guard_refused | validation_failed | targets_remain
    # | unchanged | truncated | no_diff | error | drafted
    outcome: str = "pending"
    detail: str = ""


class LlmUsage(Record):
    """The job's language-model spending, and the `budget` gate's bookkeeping."""

    tokens_in: int = 0
    tokens_out: int = 0
    calls: int = 0
    budget_grants: int = 0  # each approval of the `budget` gate grants one more budget
    budget_gate_batch: int | None = None  # the batch a `budget` gate was opened for, until settled

    @property
    def tokens(self) -> int:
        return self.tokens_in + self.tokens_out


class Attempt(Record):
    number: int
    started_at: datetime
    finished_at: datetime | None = None
    outcome: str = "running"  # running | validated | failed | gated | skipped
    edit_summary: str = ""
    commands: list[CommandEvidence] = []
    lines_added: int = 0
    lines_removed: int = 0
    remaining_targets: list[str] = []
    error: ErrorInfo | None = None
    llm_calls: list[ModelCall] = []
    transcript: str | None = None  # where the model transcript of this attempt is kept


class LeftOut(Record):
    """A file in the job's `paths` that the plan left out, and the rule that excludes it."""

    path: str
    rule: str  # e.g. "allow_test_edits is false", "protected_paths: `.github/**`", "symlink"


class Batch(Record):
    number: int
    milestone: int
    files: list[str]
    targets: int = 0
    status: BatchStatus = BatchStatus.PENDING
    attempts: list[Attempt] = []
    consecutive_failures: int = 0
    approved_gates: list[Gate] = []
    commit: str | None = None
    adopted: bool = False
    summary: str = ""
    file_summaries: dict[str, str] = {}
    reason: str = ""
    revert_commit: str | None = None
    leftovers: list[str] = []
    changed_files: list[str] = []  # what the committed batch changed (a codemod may skip some)
    revert_commands: list[CommandEvidence] = []  # validation of the head after `revert`
    revert_ok: bool | None = None

    def set_status(self, new: BatchStatus) -> None:
        check_batch_transition(self.status, new)
        self.status = new

    @property
    def last_attempt(self) -> Attempt | None:
        return self.attempts[-1] if self.attempts else None


class OpenGate(Record):
    id: str
    kind: Gate
    opened_at: datetime
    reason: str
    batch: int | None = None
    milestone: int | None = None
    report: ErrorInfo | None = None
    shown_at: datetime | None = None  # when GitHub confirmed the gate's comment (server mode)
    while_planning: bool = False  # it stopped the job before a plan existed: passing it plans

    @property
    def exit_code(self) -> int:
        return GATE_EXIT_CODES[self.kind]


class OutboxEntry(Record):
    """A publication owed to the people steering the job (server mode: a comment, the PR body,
    later a check run), recorded before the job waits and kept until GitHub confirms it; the
    reconciler publishes what is still here (jobs/outbox.py)."""

    key: str  # plan | card | summary | gate:<gate id> | milestone:<m> | resumed:<n> | check:<id>
    kind: str  # the publication kind (jobs.forge.Publication)
    since: datetime
    tries: int = 0
    last_error: str = ""
    text: str = ""  # only for a message the record cannot render again (where a job resumed)


class Event(Record):
    at: datetime
    kind: str
    message: str
    batch: int | None = None


class FinalReview(Record):
    merged_with_base: str
    commands: list[CommandEvidence] = []
    ok: bool = False
    leftovers: list[str] = []
    unfinished_batches: list[int] = []


class EnvironmentRecord(Record):
    """The job's environment: its cache key, whether this job reused it, what setup left and
    the setup commands' evidence from the run that built it."""

    key: str
    from_cache: bool = False
    entries: list[str] = []
    setup: list[CommandEvidence] = []


class Job(Record):
    """Everything known about one job; written to the store after every step."""

    id: str
    number: int
    title: str
    repo: str
    status: JobStatus = JobStatus.QUEUED
    version: int = 0
    created_at: datetime
    updated_at: datetime
    spec: TaskSpec
    spec_digest: str
    spec_text: str
    config: RepoConfig
    base_branch: str
    base_sha: str
    branch: str
    head_sha: str
    approved_digest: str | None = None
    approved_milestones: list[int] = []
    gate: OpenGate | None = None
    gate_counter: int = 0
    batches: list[Batch] = []
    scope_files: list[str] = []
    target_count: int = 0
    baseline: list[CommandEvidence] = []
    baseline_ok: bool | None = None
    baseline_sha: str | None = None  # the commit the baseline above ran on
    left_out: list[LeftOut] = []
    environment: EnvironmentRecord | None = None  # what `setup` built (None without setup)
    issue_file: str | None = None  # local mode: the issue file the job was started from
    instructions: list[str] = []
    note_path: str = ""
    note_commit: str | None = None
    final_review: FinalReview | None = None
    error: ErrorInfo | None = None
    events: list[Event] = Field(default_factory=list)
    llm: LlmUsage = Field(default_factory=LlmUsage)
    outbox: list[OutboxEntry] = []  # publications GitHub has not confirmed yet
    extra: dict[str, Any] = {}

    def set_status(self, new: JobStatus) -> None:
        check_job_transition(self.status, new)
        self.status = new

    @property
    def milestone_count(self) -> int:
        return max((batch.milestone for batch in self.batches), default=0)

    def batch(self, number: int) -> Batch:
        if 0 < number <= len(self.batches) and self.batches[number - 1].number == number:
            return self.batches[number - 1]  # batches are numbered 1..n in order
        for batch in self.batches:
            if batch.number == number:
                return batch
        raise StateError(
            f"batch {number} does not exist (this job has {len(self.batches)} batches)",
            hint="use a batch number from `stepwise status`",
            code="unknown_batch",
        )

    def milestone_batches(self, milestone: int) -> list[Batch]:
        return [batch for batch in self.batches if batch.milestone == milestone]

    @property
    def is_terminal(self) -> bool:
        return self.status in TERMINAL_JOB_STATUSES
