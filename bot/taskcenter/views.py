"""What the pages and the JSON API show about a job, built from its record (never an estimate)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from bot.commands.registry import voice as server_voice
from bot.taskcenter.links import Links
from bot.taskcenter.records import (
    GROUP_LABELS,
    BatchCounts,
    Group,
    batch_counts,
    group_of,
)
from jobs.basics.errors import ErrorInfo
from jobs.basics.redact import redact
from jobs.kernel import outbox
from jobs.kernel.gates import gate_choices
from jobs.kernel.job import Batch, Job
from jobs.kernel.model import GATES, GateKind, JobStatus
from jobs.notes.progress import rate_limit_note
from jobs.notes.tally import outcome, tally

# How often an open job page looks for a new version, by group (seconds; none when finished).
REFRESH_S: dict[Group, int] = {Group.RUNNING: 5, Group.WAITING: 30, Group.NEEDS_HUMAN: 30}


class GateView(BaseModel):
    """The open gate and the exact comment that answers it."""

    id: str
    kind: GateKind
    reason: str
    opened_at: datetime
    batch: int | None = None
    milestone: int | None = None
    needs: Literal["decision", "human"] = Field(
        description="decision: a gate waiting for approval (local exit 3); human: someone has to "
        "fix or look (exit 4)")
    comment: str = Field(description="the comment to post to take the usual way on, exactly")
    meaning: str = Field(description="what that comment does")
    other_comments: list[str] = Field(description="the other comments this gate accepts")
    where: str = Field(description="where to post it: the pull request once it exists, else "
                       "the issue")
    where_url: str | None = None
    report: ErrorInfo | None = None
    published: bool = Field(default=True, description="false while the gate's comment is "
                            "waiting to be published on GitHub (Stepwise keeps trying)")
    publication: str = Field(default="", description="why the gate is not shown yet, if not")


class JobSummary(BaseModel):
    """One row of the task center: counts come from the recorded batches."""

    id: str
    repo: str
    number: int
    title: str
    status: JobStatus
    group: Group
    group_label: str
    gate: GateView | None = None
    batches: BatchCounts
    outcome: str = Field(default="", description="the status in words: \"completed with "
                         "leftovers\" when targets remain for a human")
    progress: str = Field(default="", description="the batches and files, counted as the card, "
                          "the change note and the closing summary count them")
    created_at: datetime
    updated_at: datetime
    version: int
    issue_url: str | None = None
    pull_number: int | None = None
    pull_url: str | None = None
    url: str = Field(description="the job's task center page")
    notice: str = Field(default="", description="waiting for GitHub's rate limit (until when), or "
                        "publications GitHub refused for good")


class JobPage(BaseModel):
    """One page of `GET /api/jobs`, newest job first."""

    jobs: list[JobSummary]
    page: int
    per_page: int
    total: int = Field(description="jobs matching the filters")
    pages: int
    group_counts: dict[str, int] = Field(
        description="jobs per status group, with the repository and text filters applied")
    truncated: bool = Field(description="true when only the newest 10,000 jobs were searched")


class JobDetail(BaseModel):
    """`GET /api/jobs/{id}`: the summary and the whole record (secrets redacted)."""

    summary: JobSummary
    record: Job


def gate_view(job: Job, links: Links) -> GateView | None:
    gate = job.gate
    if gate is None:
        return None
    choices, voice = gate_choices(job, gate), server_voice()
    pull_number, pull_url = links.pull(job.server.pull)
    if pull_number is not None:
        where, where_url = f"pull request #{pull_number}", pull_url
    else:
        where, where_url = f"issue #{job.number}", links.issue(job.repo, job.number)
    return GateView(
        published=outbox.gate_waiting(job) is None, publication=redact(outbox.waiting_note(job)),
        id=gate.id, kind=gate.kind, reason=redact(gate.reason), opened_at=gate.opened_at,
        batch=gate.batch, milestone=gate.milestone,
        needs="decision" if GATES[gate.kind].exit_code == 3 else "human",
        comment=voice.typed(choices.usage), meaning=choices.meaning,
        other_comments=[voice.typed(other) for other in choices.others],
        where=where, where_url=where_url,
        report=ErrorInfo.model_validate(redact_tree(gate.report.model_dump(mode="json")))
        if gate.report else None,
    )


def summarise(job: Job, links: Links) -> JobSummary:
    group = group_of(job.status, job.gate.kind if job.gate else None)
    pull_number, pull_url = links.pull(job.server.pull)
    counted = tally(job)
    return JobSummary(
        outcome=outcome(job, counted), progress=counted.line(),
        id=job.id, repo=job.repo, number=job.number, title=job.title, status=job.status,
        group=group, group_label=GROUP_LABELS[group], gate=gate_view(job, links),
        batches=batch_counts(job.batches), created_at=job.created_at, updated_at=job.updated_at,
        version=job.version, issue_url=links.issue(job.repo, job.number),
        pull_number=pull_number, pull_url=pull_url, url=f"/jobs/{job.id}",
        notice=redact("\n".join(filter(None, (rate_limit_note(job), outbox.refused_note(job))))),
    )


def redact_tree(value: Any) -> Any:
    """Every string of a JSON-like value redacted (output tails may hold a printed token)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, list):
        return [redact_tree(item) for item in value]
    if isinstance(value, dict):
        return {key: redact_tree(item) for key, item in value.items()}
    return value


def detail(job: Job, links: Links) -> JobDetail:
    record = Job.model_validate(redact_tree(job.model_dump(mode="json")))
    return JobDetail(summary=summarise(job, links), record=record)


class MilestoneView(BaseModel):
    number: int
    batches: list[Batch]
    counts: BatchCounts
    approved: bool
    in_focus: bool


def milestones(job: Job) -> list[MilestoneView]:
    """The job's milestones with their batches; the one with the open gate or the first
    unfinished one is in focus (shown open)."""
    views = []
    focus = job.gate.milestone if job.gate is not None else None
    if job.gate is not None and focus is None:
        focus = next((b.milestone for b in job.batches if b.number == job.gate.batch), None)
    for number in range(1, job.milestone_count + 1):
        batches = job.milestone_batches(number)
        counts = batch_counts(batches)
        if focus is None and counts.done < counts.total:
            focus = number
        views.append(MilestoneView(number=number, batches=batches, counts=counts,
                                   approved=number in job.approved_milestones,
                                   in_focus=number == focus))
    return views


def refresh_seconds(job: Job) -> int:
    return REFRESH_S.get(group_of(job.status, job.gate.kind if job.gate else None), 0)


def duration(start: datetime | None, end: datetime | None) -> str:
    if start is None or end is None:
        return "—"
    seconds = max(0.0, (end - start).total_seconds())
    return seconds_label(seconds)


def seconds_label(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, secs = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {secs} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min"


def ago(then: datetime, now: datetime) -> str:
    seconds = (now - then).total_seconds()
    if seconds < 60:
        return "just now"
    if seconds < 3600:
        return f"{int(seconds // 60)} min ago"
    if seconds < 86400:
        return f"{int(seconds // 3600)} h ago"
    return f"{int(seconds // 86400)} d ago"
