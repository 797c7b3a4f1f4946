"""Opening gates, applying the human verbs to them (pure changes to the job record), and what a
gate prompt recommends: the answer that can work and the other choices (what each gate takes is
the gate table in jobs/kernel/model.py; what passing it does, the pass table in
jobs/kernel/gate_passes.py).

Each verb keeps one meaning. At `failure`, `approve` still retries the batch (DESIGN's table) but
is not offered as a choice of its own beside `retry`; where it means something else (finish
despite a failed final review, go on without merging the base: the failure cause's row in
jobs/kernel/gate_passes.py, or a feature's, says so) it is the recommended answer. A
batch of a deterministic recipe (`replace`, `command`) that failed validation would fail the same
way again, so the prompt recommends `skip`, a revert or a spec fix, never a retry.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from jobs.basics.errors import BadInputError, ErrorInfo, RetryClass
from jobs.basics.voice import Voice, cmd, is_placeholder
from jobs.inputs.config import RepoConfig
from jobs.inputs.recipes import rules_for
from jobs.kernel.feature_parts import config_reloaded
from jobs.kernel.gate_passes import PASSES, failure_row, pass_gate
from jobs.kernel.job import Batch, Job, OpenGate
from jobs.kernel.model import GATES, BatchStatus, FailureCause, Gate, JobStatus, Verb
from jobs.kernel.records import NOT_THE_EDIT_CODES, PendingIssue

__all__ = ["Choices", "RefusedError", "Verb", "apply_verb", "gate_choices",
           "note_spec_change", "open_gate", "reload_config", "repeats_itself", "skip_files",
           "split_skip_words"]

class RefusedError(BadInputError):
    """A verb that does not apply now; nothing changed."""

    code = "command_refused"


def open_gate(
    job: Job, kind: str, *, reason: str, now: datetime, batch: int | None = None,
    milestone: int | None = None, report: ErrorInfo | None = None,
    cause: str | None = None,
) -> OpenGate:
    """Open gate `kind` and wait there. A `failure` gate keeps its cause (the row passing it
    uses): the one given, else a failed batch when it is about one, else a fault."""
    if kind is Gate.FAILURE and cause is None:
        cause = FailureCause.BATCH if batch is not None else FailureCause.FAULT
    job.gate_counter += 1
    planning = job.status in (JobStatus.QUEUED, JobStatus.PLANNING) or (
        job.status is JobStatus.INTERRUPTED and job.approved_digest is None)
    gate = OpenGate(id=f"{kind}-{job.gate_counter}", kind=kind, opened_at=now, reason=reason,
                    batch=batch, milestone=milestone, report=report,
                    while_planning=planning and kind is not Gate.PLAN,
                    cause=cause if kind is Gate.FAILURE else None)
    job.set_status(JobStatus.AWAITING_HUMAN)
    job.gate = gate
    return gate


def apply_verb(job: Job, verb: Verb, *, reason: str = "", gate_id: str | None = None,
               files: Sequence[str] = (), by: str = "") -> str:
    """Apply `verb` to the open gate; return what happened. Raises RefusedError, changing nothing.
    `skip` with `files` drops only those files of the paused batch and runs the rest again;
    `by` names who answered (a row that records acceptances reads it: `tests_weakened`)."""
    gate = job.gate
    if verb is Verb.CANCEL:
        return _cancel(job)
    if gate is None or job.status is not JobStatus.AWAITING_HUMAN:
        raise RefusedError(
            f"there is no open gate to {verb} (job status `{job.status}`)",
            hint="the process that ran the job is gone: resume it with `stepwise run` and "
                 "the same issue file" if job.status is JobStatus.INTERRUPTED
            else f"{cmd('status')} shows what the job is doing",
        )
    if gate_id is not None and gate_id != gate.id:
        raise RefusedError(
            f"the command was for gate {gate_id}, but gate {gate.id} is open now",
            hint="read the latest progress card and answer the gate that is open",
            code="stale_gate",
        )
    if verb not in GATES[gate.kind].verbs:
        allowed = ", ".join(sorted(GATES[gate.kind].verbs | {Verb.CANCEL}))
        raise RefusedError(
            f"`{verb}` does not apply to the `{gate.kind}` gate",
            hint=f"this gate accepts: {allowed}",
        )
    if verb is Verb.SKIP and not reason.strip():
        raise RefusedError("`skip` needs a reason", hint=f"e.g. {cmd('skip', 'generated code')}")
    if verb is Verb.SKIP and is_placeholder(reason, "reason"):
        raise RefusedError(f"`skip` was given its placeholder `{reason.strip()}`, not a reason",
                           hint=f"write why in its place, e.g. {cmd('skip', 'generated code')}")
    if verb is Verb.SKIP and gate.batch is None:
        raise RefusedError(f"the `{gate.kind}` gate is not about one batch, so there is "
                           "nothing to skip", hint=f"use {cmd('approve')} or {cmd('cancel')}")
    if files:
        if verb is not Verb.SKIP:
            raise RefusedError("only `skip` takes files", hint="e.g. `stepwise skip --files "
                               "a.py broken by the codemod`")
        message = skip_files(job, job.batch(gate.batch or 0), files, reason.strip())
    else:
        gate.answered_by = by
        message = _pass(job, gate, verb, reason.strip())
    job.gate = None
    return message


def _pass(job: Job, gate: OpenGate, verb: Verb, reason: str) -> str:
    """The answers every gate shares (`skip` of its batch; a gate that stopped the job before
    a plan existed plans again), else the gate's row in the pass table."""
    batch = job.batch(gate.batch) if gate.batch is not None else None
    if verb is Verb.SKIP and batch is not None:
        batch.set_status(BatchStatus.SKIPPED)
        batch.reason = reason
        job.set_status(JobStatus.RUNNING)
        return (f"batch {batch.number} skipped: {reason} (its files are left unchanged: "
                f"{', '.join(batch.files)})")
    if gate.while_planning and PASSES[gate.kind].resumes is JobStatus.RUNNING:
        job.set_status(JobStatus.PLANNING)  # it stopped the job before a plan existed
        return "planning again: no plan was approved yet"
    return pass_gate(job, gate, verb, batch)


def skip_files(job: Job, batch: Batch, files: Sequence[str], reason: str) -> str:
    """Drop `files` from the paused `batch` into a skipped batch of their own (numbered after
    the last one, with the reason) and run the rest of the batch again, counter reset."""
    unknown = [path for path in files if path not in batch.files]
    if unknown:
        raise RefusedError(f"batch {batch.number} has no file {', '.join(unknown)}",
                           hint=f"its files: {', '.join(batch.files)}")
    dropped = [path for path in batch.files if path in set(files)]
    kept = [path for path in batch.files if path not in set(files)]
    if not kept:
        raise RefusedError(f"that is every file of batch {batch.number}",
                           hint=f"skip the whole batch: {cmd('skip', '<reason>')} without --files")
    batch.files = kept
    batch.consecutive_failures = 0
    if batch.status is not BatchStatus.PENDING:
        batch.set_status(BatchStatus.PENDING)
    aside = Batch(number=max(b.number for b in job.batches) + 1, milestone=batch.milestone,
                  files=dropped, reason=f"{reason} (set aside from batch {batch.number})")
    aside.set_status(BatchStatus.SKIPPED)
    job.batches.append(aside)
    job.set_status(JobStatus.RUNNING)
    return (f"batch {batch.number}: {', '.join(dropped)} skipped as batch {aside.number} "
            f"({reason}); the other {len(kept)} file(s) run again")


def split_skip_words(job: Job, words: list[str]) -> tuple[list[str], str]:
    """`skip --files a.py b.py the reason`: the words naming files of the paused batch, and the
    rest as the reason."""
    gate = job.gate
    batch_files = set(job.batch(gate.batch).files) if gate is not None and \
        gate.batch is not None else set()
    paths = [word for word in words if word in batch_files]
    if not paths:
        listed = ", ".join(sorted(batch_files)) or "no batch is paused"
        raise RefusedError("`skip --files` names no file of the paused batch",
                            hint=f"name some of its files before the reason ({listed})")
    return paths, " ".join(word for word in words if word not in batch_files)


def reload_config(job: Job, config: RepoConfig, *, source: str | None = None) -> str:
    """At the `plan` gate: take `config` (read again by the caller) and plan again, baseline
    included. Raises RefusedError, changing nothing, at any other time: a config read after
    approval would change what was approved."""
    gate = job.gate
    if gate is None or job.status is not JobStatus.AWAITING_HUMAN or not (
            gate.kind is Gate.PLAN or gate.while_planning):
        where = f"the `{gate.kind}` gate is open" if gate is not None else \
            f"the job is `{job.status}`"
        raise RefusedError(f"the config can be reloaded only at the plan gate; {where}",
                           hint="to change the config of an approved job, cancel it and start a "
                                "new one")
    changed = config != job.config
    job.config, job.config_source = config, source
    if changed:
        config_reloaded(job)  # what the features made of the former config (an environment)
    job.baseline, job.baseline_ok, job.baseline_sha = [], None, None
    job.gate = None
    job.set_status(JobStatus.PLANNING)
    return ("config reloaded" if changed else "config reloaded (unchanged)") + \
        "; planning again, the baseline runs again"


def _cancel(job: Job) -> str:
    if job.is_terminal:
        raise RefusedError(f"the job is already {job.status}", hint="nothing to cancel")
    job.gate = None
    job.stop_waiting()  # a cancelled job waits for nothing (a running one then needs its step)
    if job.status is JobStatus.RUNNING or job.status is JobStatus.PLANNING:
        job.set_status(JobStatus.CANCEL_REQUESTED)
        return "cancel requested: the job stops at the next safe point"
    if job.status is JobStatus.CANCEL_REQUESTED:
        return "cancel already requested"
    job.set_status(JobStatus.CANCELLED)
    return "job cancelled"


def note_spec_change(job: Job, *, title: str, body: str, now: datetime) -> None:
    """The issue text changed: re-plan at once if nothing was approved, else open `spec_changed`."""
    job.pending_issue = PendingIssue(title=title, body=body)
    if job.approved_digest is None and job.status is JobStatus.AWAITING_HUMAN:
        job.gate = None
        job.set_status(JobStatus.PLANNING)  # nothing approved yet: just plan again
    elif job.status in (JobStatus.AWAITING_HUMAN, JobStatus.RUNNING):
        job.gate = None
        if job.status is JobStatus.AWAITING_HUMAN:
            job.set_status(JobStatus.RUNNING)
        open_gate(job, Gate.SPEC_CHANGED,
                  reason="the issue's spec changed after the plan was approved", now=now)


@dataclass(frozen=True)
class Choices:
    """The recommended answer (a usage line and what it does), the others, and a sentence on
    why a retry is not offered (empty when it is)."""

    usage: str
    meaning: str
    others: tuple[str, ...]
    why: str = ""

    def lines(self, voice: Voice) -> list[str]:
        """The prompt's closing paragraphs, each command written in `voice`."""
        paragraphs = [f"To {self.meaning}: {voice.usage(self.usage)}"]
        if self.why:
            paragraphs.append(voice.speak(self.why))
        if self.others:
            paragraphs.append("Other choices: " + ", ".join(voice.usage(u) for u in self.others))
        return paragraphs


def repeats_itself(job: Job, gate: OpenGate) -> bool:
    """A retry of this failed batch would make the same edit and fail the same way."""
    report = gate.report
    return (gate.kind is Gate.FAILURE and gate.batch is not None
            and rules_for(job.spec.recipe).deterministic
            and (report is None or (report.retry_class is not RetryClass.AUTO_RETRY
                                    and report.code not in NOT_THE_EDIT_CODES.values())))


def gate_choices(job: Job, gate: OpenGate) -> Choices:
    rule = GATES[gate.kind]
    if gate.kind is not Gate.FAILURE:
        return Choices(rule.verb, rule.meaning, rule.other_choices)
    approve_means = failure_row(gate).approve_means  # the cause's own meaning of `approve`
    if approve_means:
        return Choices("approve", approve_means, ("retry", "cancel"))
    if repeats_itself(job, gate):
        return Choices(
            "skip <reason>", f"leave batch {gate.batch} out, with the reason", (
                "revert <batch>", "cancel"),
            why=f"A retry would make the same edit and fail the same way (the `{job.spec.recipe}`"
                " recipe is deterministic). To change what the batch does, fix the spec in the "
                "issue (the job re-plans); if an earlier batch broke this one, "
                "{{revert <batch>}} undoes it.")
    return Choices("retry", rule.meaning, ("skip <reason>", "cancel"))
