"""The job record and its batches and gate: everything known about one job, written to the
store after every step. Their statuses change only through `transition()` in jobs/kernel/model.py.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, TypeVar

from pydantic import (
    BeforeValidator,
    Field,
    SerializeAsAny,
    SerializerFunctionWrapHandler,
    field_serializer,
    model_validator,
)

from jobs.basics.errors import ErrorInfo, StateError
from jobs.inputs.config import RepoConfig
from jobs.inputs.spec import TaskSpec
from jobs.kernel.git_versions import GitVersion
from jobs.kernel.human_commits import HumanCommit
from jobs.kernel.model import (
    ACTIVE_JOB_STATUSES,
    GATES,
    TERMINAL_JOB_STATUSES,
    Acceptance,
    BatchStatus,
    FailureCauseKind,
    GateKind,
    JobStatus,
    transition,
)
from jobs.kernel.plan_history import PlanRecord
from jobs.kernel.record_parts import (
    BATCH_PARTS,
    BATCH_UPGRADES,
    FORMER_BATCH_FIELDS,
    FORMER_JOB_FIELDS,
    JOB_PARTS,
    Awaited,
    RecordPart,
    part_in,
    typed,
    written,
)
from jobs.kernel.record_upgrades import (
    failure_cause,
    fields_from_extra,
    part_of_from_server,
    parts_from_fields,
    without_gate_once_ended,
)
from jobs.kernel.records import (
    Attempt,
    CommandEvidence,
    Event,
    FinalReview,
    LeftOut,
    NetworkHost,
    OutboxEntry,
    PendingIssue,
    Record,
    ServerState,
)

P = TypeVar("P", bound=RecordPart)
# Features' parts of a record by key (jobs/kernel/record_parts.py): a registered part read with
# its model, one no installed feature claims kept as it was written.
JobParts = Annotated[dict[str, SerializeAsAny[RecordPart] | dict[str, Any]],
                     BeforeValidator(lambda parts: typed(parts, JOB_PARTS))]
BatchParts = Annotated[dict[str, SerializeAsAny[RecordPart] | dict[str, Any]],
                       BeforeValidator(lambda parts: typed(parts, BATCH_PARTS))]


class Batch(Record):
    number: int
    milestone: int
    files: list[str]
    targets: int = 0
    status: BatchStatus = BatchStatus.PENDING
    attempts: list[Attempt] = []
    consecutive_failures: int = 0
    approved_gates: list[GateKind] = []
    commit: str | None = None
    # The validated tree, recorded before its commit lands: only a commit of this tree can be
    # adopted as this batch ("": a record from before trees were recorded, see Job.trees_recorded).
    tree: str = ""
    adopted: bool = False
    summary: str = ""
    file_summaries: dict[str, str] = {}
    reason: str = ""
    revert_commit: str | None = None
    leftovers: list[str] = []
    changed_files: list[str] = []  # what the committed batch changed (a codemod may skip some)
    revert_commands: list[CommandEvidence] = []  # validation of the head after `revert`
    revert_ok: bool | None = None
    # A feature's own part of this batch's record, under its name (kept with the batch, so a
    # job of many batches keeps a small document): `batch.part(Model)`.
    parts: BatchParts = {}

    @model_validator(mode="before")
    @classmethod
    def _parts_of_older_records(cls, data: Any) -> Any:
        data = parts_from_fields(data, FORMER_BATCH_FIELDS)
        for upgrade in BATCH_UPGRADES.values() if isinstance(data, dict) else ():
            data = upgrade(data)
        return data

    @field_serializer("parts", mode="wrap")
    def _parts_written(self, parts: dict[str, Any], handler: SerializerFunctionWrapHandler) -> Any:
        return handler(written(parts))

    def part(self, model: type[P]) -> P:
        """The feature's part of this batch (jobs/kernel/record_parts.py), empty at first."""
        return part_in(self.parts, model)

    def set_status(self, new: BatchStatus) -> None:
        transition(self, new)

    @property
    def last_attempt(self) -> Attempt | None:
        return self.attempts[-1] if self.attempts else None


class OpenGate(Record):
    id: str
    kind: GateKind
    opened_at: datetime
    reason: str
    batch: int | None = None
    milestone: int | None = None
    report: ErrorInfo | None = None
    shown_at: datetime | None = None  # when GitHub confirmed the gate's comment (server mode)
    while_planning: bool = False  # it stopped the job before a plan existed: passing it plans
    cause: FailureCauseKind | None = None  # a `failure` gate's reason, its row in the pass table
    answered_by: str = ""  # who answered it ("@login"; locally the user), set as it is passed

    @model_validator(mode="before")
    @classmethod
    def _cause_of_older_records(cls, data: Any) -> Any:
        return failure_cause(data)

    @property
    def exit_code(self) -> int:
        return GATES[self.kind].exit_code


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
    config_source: str | None = None  # local mode: "working tree" when not the commit's config
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
    plans: list[PlanRecord] = []  # each plan, earlier ones with their batches (plan_history)
    baseline_from: str = ""  # "issue-<N>/<commit>" when a recorded baseline was reused
    left_out: list[LeftOut] = []
    network_hosts: list[NetworkHost] = []  # the default allowlist and why (network_allow empty)
    git_version: GitVersion | None = None  # the version from git given to the version tools
    issue_file: str | None = None  # local mode: the issue file the job was started from
    # The campaign this job is one part of, named in its card and change note: the App's
    # control issue (`owner/repo#N`) or, locally, the campaign's issue file; '' on its own.
    part_of: str = ""
    instructions: list[str] = []
    note_path: str = ""
    note_commit: str | None = None
    # The trees of the note, revert and base-merge commits Stepwise lands, each recorded before
    # its commit lands: a commit with those trailers is ours only with one of these trees.
    landing_trees: list[str] = []
    # The ids of the newest commits Stepwise made to land, each recorded before it lands. A
    # commit pushed with git (local mode, `commit_via: git`) carries no proof of who made it:
    # it is Stepwise's own only when its id is one of these (a copy of Stepwise's identity,
    # trailers and tree is someone else's). Empty: a record of an earlier release (identity).
    landing_commits: list[str] = []
    # Whether this record was started by a release that records trees before landing. False:
    # a record of an earlier release, or one rebuilt from the branch after it was lost; a
    # commit for which it holds no tree is then adopted when Stepwise made it (its identity,
    # and in server mode GitHub's signature as the App), as before.
    trees_recorded: bool = False
    final_review: FinalReview | None = None
    error: ErrorInfo | None = None
    events: list[Event] = Field(default_factory=list)
    outbox: list[OutboxEntry] = []  # publications GitHub has not confirmed yet
    job_check_said: str = ""  # what the `Stepwise` check run last said: it is sent on change only
    human_commits: list[HumanCommit] = []  # people's commits taken in (jobs/kernel/human_commits)
    # What a passed gate lets the next step accept once (jobs/kernel/gate_passes.py sets it):
    accepted: list[Acceptance] = []
    pending_issue: PendingIssue | None = None  # the changed issue text, adopted when re-planning
    untrusted_spec: bool = False  # drafted, or written by someone who may not steer: plan gate
    server: ServerState = Field(default_factory=ServerState)  # server mode only
    # A feature's own part of the record, under its name: `job.part(Model)`.
    parts: JobParts = {}

    @model_validator(mode="before")
    @classmethod
    def _fields_from_extra(cls, data: Any) -> Any:
        data = without_gate_once_ended(part_of_from_server(fields_from_extra(data)))
        return parts_from_fields(data, FORMER_JOB_FIELDS)

    @field_serializer("parts", mode="wrap")
    def _parts_written(self, parts: dict[str, Any], handler: SerializerFunctionWrapHandler) -> Any:
        return handler(written(parts))

    def part(self, model: type[P]) -> P:
        """The feature's part of the record (jobs/kernel/record_parts.py), empty at first."""
        return part_in(self.parts, model)

    def set_status(self, new: JobStatus) -> None:
        transition(self, new)
        if self.is_terminal:
            self.gate = None  # an ended job waits at no gate (however it ended)

    def accept(self, what: Acceptance) -> None:
        """A passed gate lets the next step accept `what` once."""
        if what not in self.accepted:
            self.accepted.append(what)

    def take(self, what: Acceptance) -> bool:
        """Whether a passed gate let the job accept `what`; it is used up by asking."""
        if what not in self.accepted:
            return False
        self.accepted.remove(what)
        return True

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
            hint="use a batch number from {{status}}",
            code="unknown_batch",
        )

    def milestone_batches(self, milestone: int) -> list[Batch]:
        return [batch for batch in self.batches if batch.milestone == milestone]

    @property
    def is_terminal(self) -> bool:
        return self.status in TERMINAL_JOB_STATUSES

    def awaited(self) -> Awaited | None:
        """What a feature's part holds the job waiting for outside (CI's verdict on a commit;
        jobs/kernel/record_parts.py), or None."""
        for part in self.parts.values():
            if isinstance(part, RecordPart) and (found := part.awaited()) is not None:
                return found
        return None

    @property
    def waiting_outside(self) -> bool:
        """Running, but waiting for something outside (CI's verdict): no worker holds it."""
        return self.status is JobStatus.RUNNING and self.awaited() is not None

    def stop_waiting(self) -> None:
        """Wait for nothing outside any more (the job was cancelled)."""
        for part in self.parts.values():
            if isinstance(part, RecordPart):
                part.stop_waiting()

    @property
    def is_active(self) -> bool:
        """A worker has something to do: not ended, not at a gate, not waiting outside (CI)."""
        return self.status in ACTIVE_JOB_STATUSES and not self.waiting_outside
