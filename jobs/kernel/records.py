"""The records the job holds besides its state: evidence of commands (and a command's result
made into its evidence, redacted), model calls and their usage, attempts, events, the final
review, a changed issue text, and what only server mode keeps (pydantic, no I/O)."""

from __future__ import annotations

import shlex
from datetime import datetime

from pydantic import BaseModel, ConfigDict

from jobs.basics.errors import ErrorInfo, StateError
from jobs.basics.redact import redact
from jobs.inputs.sandboxing import CommandResult


class Record(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class Target(Record):
    """One place a `find` pattern matched: `path:line`, and the line's text when known
    (`path:line — text`, as leftovers list it)."""

    path: str
    line: int
    text: str = ""

    def __str__(self) -> str:
        return f"{self.path}:{self.line}" + (f" — {self.text}" if self.text else "")


LINE_TEXT_CHARS = 160


def line_text(content: str | None, line: int) -> str:
    """Line `line` (1-based) of `content`, stripped and cut to LINE_TEXT_CHARS ("" if none)."""
    lines = (content or "").splitlines()
    if not 1 <= line <= len(lines):
        return ""
    text = lines[line - 1].strip()
    return text if len(text) <= LINE_TEXT_CHARS else text[:LINE_TEXT_CHARS - 1] + "…"


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
    # The tests its runner's machine-readable report named as failed (pytest's JUnit XML,
    # jest's and vitest's JSON; jobs/features/evidence); [] when it named none or was not read.
    failed_tests: list[str] = []

    @property
    def display(self) -> str:
        """The command as a shell would take it back (`shlex.join`: quotes kept)."""
        return shlex.join(self.argv)


def command_evidence(result: CommandResult) -> CommandEvidence:
    """The record of one command; its output tail is redacted (a command may print a token)."""
    return CommandEvidence(
        argv=list(result.argv), exit_code=result.exit_code,
        duration_s=round(result.duration_s, 3), output_tail=redact(result.output_tail),
        output_lines=result.output_lines, timed_out=result.timed_out,
        isolated=result.isolated, egress=list(result.egress))


class ToolUse(Record):
    """One tool call of the model (recipe llm, edit format `tools`): the decision log's entry."""

    name: str
    path: str = ""
    error: str = ""  # the error kind (no_match, refused_path, ...); empty when it worked
    severity: str = ""  # soft | hard, for errors
    reason: str = ""  # the model's one-line reason for an edit


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
    tools: list[ToolUse] = []  # the tool calls this answer asked for, in order


# The error codes of failed validations that are not the edit's (jobs/decisions/blame.py): a
# retry at their gate is the move once the cause is fixed, the same edit or not.
NOT_THE_EDIT_CODES = {"pre_existing": "pre_existing_failure", "environment": "environment_changed"}


class FailureCheck(Record):
    """Whose a failed validation was (jobs/decisions/blame.py): the cause, the command and the
    tests that failed, the parent commit re-run on, and the re-runs that decided it."""

    cause: str  # edit | flaky | pre_existing | environment
    command: str
    tests: list[str] = []
    parent: str = ""
    reruns: list[CommandEvidence] = []


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
    # A failed validation's output.log and attempt.diff (jobs/engine/attempt_outcome.py)
    artifacts: list[str] = []
    failure_check: FailureCheck | None = None  # a failed validation examined (its re-runs)


class Event(Record):
    at: datetime
    kind: str
    message: str
    batch: int | None = None


class FinalReview(Record):
    merged_with_base: str
    commands: list[CommandEvidence] = []
    # Validation not run again: the head's tree is what this batch validated ("batch 5 (`abc1234`)")
    reused_from: str = ""
    ok: bool = False
    leftovers: list[str] = []
    unfinished_batches: list[int] = []


class LeftOut(Record):
    """A file in the job's `paths` that the plan left out, and the rule that excludes it."""

    path: str
    rule: str  # e.g. "allow_test_edits is false", "protected_paths: `.github/**`", "symlink"


class OutboxEntry(Record):
    """A publication owed to the people steering the job (server mode: a comment, the PR body,
    later a check run), recorded before the job waits and kept until GitHub confirms it; the
    reconciler publishes what is still here (jobs/kernel/outbox.py)."""

    key: str  # plan | card | summary | gate:<gate id> | milestone:<m> | resumed:<n> | check:<id>
    kind: str  # the publication kind (jobs.ports.Publication)
    since: datetime
    tries: int = 0
    last_error: str = ""
    text: str = ""  # only for a message the record cannot render again (where a job resumed)
    refused: str = ""  # GitHub refused it for good (a 4xx asking again will not change): why


class NetworkHost(Record):
    """A host the egress proxy admits when `network_allow` is empty, and why (`Python files`,
    `PIP_INDEX_URL`, "`.npmrc` registry="); `left_out` says why a configured index is not
    admitted after all (plain HTTP, a loopback or private address)."""

    host: str
    why: str
    left_out: str = ""


class PendingIssue(Record):
    """An issue text that changed after planning, adopted when the job plans again."""

    title: str
    body: str


class PullRequest(Record):
    """The job's pull request on GitHub, once it is open (server mode)."""

    number: int
    node_id: str
    url: str = ""
    draft: bool = True  # False once marked ready, or when drafts were not available


class JobCheckRun(Record):
    """Where the job's `Stepwise` check run was last sent: the commit, the run, whether it was
    left open (in progress, or asking at a gate) and must be closed when the head moves, and
    whether it is completed (GitHub keeps a completed run: it is closed by a newer run)."""

    sha: str
    id: int
    open: bool
    completed: bool = False


class ServerState(Record):
    """What only server mode keeps about a job: where it lives on GitHub, the comments it edits
    in place, and the worker's bookkeeping (queue position, interruptions, transient retries)."""

    installation_id: int | None = None  # the GitHub App installation the job acts through
    pull: PullRequest | None = None
    comments: dict[str, int] = {}  # a comment's marker key -> its id, to edit it in place
    queue_position: int | None = None  # shown on the card while the job waits for a slot
    interruptions: int = 0  # times a worker died under the job (each resumes it once)
    transient_failures: int = 0  # transient faults in a row, for the back-off
    retry_scheduled: bool = False  # a back-off retry is queued: do not queue another step
    rate_limited_until: datetime | None = None  # waiting for GitHub's rate limit until then
    rate_limit_waits: int = 0  # rate limits met in a row (a secondary limit's wait grows)
    rebuilt: bool = False  # rebuilt from GitHub after its record was lost
    job_check_run: JobCheckRun | None = None
    started_by: str = ""  # who labelled the issue: assigned, mentioned at gates, asked to review
    # The config's `approvers` logins (lower case) -> the account id each named when the job
    # started (0: no such account); commands are matched by the sender's id (bot/steering.py).
    approver_ids: dict[str, int] = {}
    plan_gate: str = ""  # the plan gate the current plan comment asks (a later one: a new comment)
    plan_key: str = "plan"  # the marker key of the current plan comment
    queue_closed: bool = False  # the queue-position comment says the job has started
    cancelled_by: str = ""  # who ended it and how ("@maria closed the issue"), for the summary
    parked: str = ""  # why no GitHub call is made for it now (a suspended installation), or ""

    def installation(self) -> int:
        """The installation id; a job started through a webhook always has one."""
        if self.installation_id is None:
            raise StateError("this job has no GitHub App installation (it was not started "
                             "through a webhook)", code="no_installation",
                             hint="start the job by labelling its issue")
        return self.installation_id
