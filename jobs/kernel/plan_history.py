"""What each plan of a job did, kept across re-plans, for the change note's "History".

A re-plan (the spec changed, the config was reloaded) keeps the finished batches and plans the
rest again: the failed and unstarted batches of the earlier plan leave `job.batches`. Before
that, the earlier plan's batches are written down here as they ended (status, commit, attempts,
files), so the note still tells what every plan committed, what failed and what was dropped.
A plan in which nothing was tried is replaced instead of kept (re-planning before approval).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from pydantic import Field

from jobs.basics import markdown_safe as md
from jobs.kernel.records import Record

FILES_SHOWN = 3


class PlannedBatch(Record):
    """One batch of an earlier plan, as it stood when the plan was replaced."""

    number: int
    files: list[str]
    status: str
    commit: str | None = None
    attempts: int = 0


class PlanRecord(Record):
    """One plan of the job: when, why, under which spec, and (once replaced) its batches."""

    number: int
    planned_at: datetime
    reason: str
    spec_digest: str
    batches: list[PlannedBatch] = Field(default_factory=list)


def anything_tried(batches: Sequence[PlannedBatch]) -> bool:
    return any(b.attempts or b.status != "pending" for b in batches)


def _batch_words(batch: PlannedBatch) -> str:
    files = ", ".join(md.code(f) for f in batch.files[:FILES_SHOWN])
    if len(batch.files) > FILES_SHOWN:
        files += f" and {len(batch.files) - FILES_SHOWN} more"
    tried = f" after {batch.attempts} attempt{'s' if batch.attempts != 1 else ''}" \
        if batch.attempts and batch.status in ("failed", "pending", "in_progress") else ""
    status = "not started" if batch.status == "pending" and not batch.attempts \
        else f"{batch.status}{tried}"
    commit = f" `{batch.commit[:7]}`" if batch.commit else ""
    return f"batch {batch.number} {status}{commit} ({files})"


def history_lines(plans: Sequence[PlanRecord]) -> list[str]:
    """The note's "History" section: every plan, and what each earlier one's batches did
    (the current plan's batches are the table above); nothing for a job planned once."""
    if len(plans) < 2:
        return []
    lines = ["", "## History", ""]
    for plan in plans:
        head = f"- Plan {plan.number} ({plan.planned_at:%Y-%m-%d %H:%M:%SZ}, {plan.reason}, " \
            f"spec `{plan.spec_digest[:12]}`)"
        if plan is plans[-1]:
            lines.append(f"{head}: the current plan (the batches above)")
            continue
        lines.append(f"{head}: {len(plan.batches)} batches")
        lines += [f"  - {_batch_words(batch)}" for batch in plan.batches]
    return lines
