"""Opening gates and applying the human verbs to them, as pure changes to the job record
(what each gate takes is the gate table in jobs/domain/model.py)."""

from __future__ import annotations

from datetime import datetime

from jobs.domain.config import RepoConfig
from jobs.domain.errors import BadInputError, ErrorInfo
from jobs.domain.job import Job, OpenGate
from jobs.domain.model import BATCH_GATES, GATES, BatchStatus, Gate, JobStatus, Verb
from jobs.domain.records import PendingIssue
from jobs.domain.voice import cmd

__all__ = ["ACCEPTED", "RefusedError", "Verb", "apply_verb", "note_spec_change", "open_gate",
           "reload_config"]

# Which verbs each gate accepts besides cancel: a view of the gate table.
ACCEPTED: dict[Gate, frozenset[Verb]] = {gate: rule.verbs for gate, rule in GATES.items()}


class RefusedError(BadInputError):
    """A verb that does not apply now; nothing changed."""

    code = "command_refused"


def open_gate(
    job: Job, kind: Gate, *, reason: str, now: datetime, batch: int | None = None,
    milestone: int | None = None, report: ErrorInfo | None = None,
) -> OpenGate:
    job.gate_counter += 1
    planning = job.status in (JobStatus.QUEUED, JobStatus.PLANNING) or (
        job.status is JobStatus.INTERRUPTED and job.approved_digest is None)
    gate = OpenGate(id=f"{kind}-{job.gate_counter}", kind=kind, opened_at=now, reason=reason,
                    batch=batch, milestone=milestone, report=report,
                    while_planning=planning and kind is not Gate.PLAN)
    job.set_status(JobStatus.AWAITING_HUMAN)
    job.gate = gate
    return gate


def apply_verb(job: Job, verb: Verb, *, reason: str = "", gate_id: str | None = None) -> str:
    """Apply `verb` to the open gate; return what happened. Raises RefusedError, changing nothing."""
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
    if verb not in ACCEPTED[gate.kind]:
        allowed = ", ".join(sorted(ACCEPTED[gate.kind] | {Verb.CANCEL}))
        raise RefusedError(
            f"`{verb}` does not apply to the `{gate.kind}` gate",
            hint=f"this gate accepts: {allowed}",
        )
    if verb is Verb.SKIP and not reason.strip():
        raise RefusedError("`skip` needs a reason", hint=f"e.g. {cmd('skip', 'generated code')}")
    if verb is Verb.SKIP and gate.batch is None:
        raise RefusedError(f"the `{gate.kind}` gate is not about one batch, so there is "
                           "nothing to skip", hint=f"use {cmd('approve')} or {cmd('cancel')}")
    message = _pass(job, gate, verb, reason.strip())
    job.gate = None
    return message


def _pass(job: Job, gate: OpenGate, verb: Verb, reason: str) -> str:
    batch = job.batch(gate.batch) if gate.batch is not None else None
    if verb is Verb.SKIP and batch is not None:
        batch.set_status(BatchStatus.SKIPPED)
        batch.reason = reason
        job.set_status(JobStatus.RUNNING)
        return f"batch {batch.number} skipped: {reason}"
    if gate.kind is Gate.SPEC_CHANGED:
        job.set_status(JobStatus.PLANNING)
        return "re-planning with the changed spec"
    if gate.while_planning:
        job.set_status(JobStatus.PLANNING)  # it stopped the job before a plan existed
        return "planning again: no plan was approved yet"
    job.set_status(JobStatus.RUNNING)
    if gate.kind is Gate.PLAN:
        job.approved_digest = job.spec_digest
        return "plan approved"
    if gate.kind is Gate.MILESTONE and gate.milestone is not None:
        job.approved_milestones.append(gate.milestone)
        return f"milestone {gate.milestone} approved"
    if gate.kind in BATCH_GATES and batch is not None:
        if verb is Verb.APPROVE:
            batch.approved_gates.append(gate.kind)
            return f"batch {batch.number}: {gate.kind} accepted"
        return f"batch {batch.number} will be retried"
    if gate.kind is Gate.FAILURE and batch is not None:
        batch.consecutive_failures = 0
        return f"batch {batch.number} will be retried (attempt counter reset)"
    if gate.kind is Gate.FAILURE and verb is Verb.APPROVE and gate.report is not None \
            and gate.report.code == "final_review_failed":
        job.accept_review = True  # what the gate's hint promises: finish anyway
        return "finishing although the final review did not pass"
    if gate.kind is Gate.CI_FAILED:
        return _ci_failed(job, verb)
    if gate.kind is Gate.HUMAN_COMMIT:
        job.accept_branch_head = True
        return "continuing on top of the pushed commits"
    if gate.kind is Gate.CONFLICT:
        job.accept_branch_head = True  # the maintainer's merge commit is not someone else's work
        return "continuing on the branch as the maintainer resolved the conflict"
    if gate.kind is Gate.FAILURE and verb is Verb.APPROVE and gate.report is not None \
            and gate.report.code == "base_merge_failed":
        job.base_declined = str(gate.report.evidence.get("base_sha") or "") or None
        return "going on without merging the base (until it moves again)"
    return f"gate {gate.kind} passed"


def _ci_failed(job: Job, verb: Verb) -> str:
    """`approve`: take the CI result as it is (the note names it); `retry`: re-run the failing
    checks and wait again. (`skip` of a batch went the generic way: the engine withdraws it.)"""
    wait = job.ci_wait
    if wait is None:
        return "gate ci_failed passed"
    what = f"milestone {wait.number}" if wait.scope == "milestone" else f"batch {wait.number}"
    if verb is Verb.RETRY:
        wait.rerun = True
        return f"re-running the failed checks of {what}, then waiting for CI again"
    for result in reversed(job.ci_results_of(wait.scope, wait.number)):
        if result.sha == wait.sha:
            result.accepted = True
            break
    if wait.scope == "batch":
        batch = job.batch(wait.number)
        if batch.status is BatchStatus.AWAITING_CI:
            batch.set_status(BatchStatus.COMPLETED)
    job.ci_wait = None
    return f"the CI failure of {what} is accepted as it is (named in the note)"


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
    job.baseline, job.baseline_ok, job.baseline_sha = [], None, None
    job.gate = None
    job.set_status(JobStatus.PLANNING)
    return ("config reloaded" if changed else "config reloaded (unchanged)") + \
        "; planning again, the baseline runs again"


def _cancel(job: Job) -> str:
    if job.is_terminal:
        raise RefusedError(f"the job is already {job.status}", hint="nothing to cancel")
    job.gate = None
    job.ci_wait = None  # a cancelled job waits for nothing (a running one then needs its step)
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
