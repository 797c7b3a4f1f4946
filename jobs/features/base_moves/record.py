"""The base_moves feature's part of the job record (pure): `Job.parts["base_moves"]`, read with
`BaseMoves` (installed through parts.py, so a stored record is checked against it). Records
written before the part existed kept these as the job's fields `base_merges`, `base_checked`,
`base_conflict`, `base_declined` and `base_moved_at`; `FORMER_FIELDS` reads them into it."""

from __future__ import annotations

from datetime import datetime
from typing import ClassVar, Literal

from jobs.kernel.job import Job
from jobs.kernel.record_parts import RecordPart
from jobs.kernel.records import CommandEvidence, Record


class ReplayedBatch(Record):
    """A batch whose recipe ran again on the base's version of its conflicting files."""

    batch: int
    files: list[str]
    reason: str  # why it was replayed: "the base changed calc/a.py, which batch 2 edited"
    commands: list[CommandEvidence] = []  # what the recipe ran (recipe `command`)


class BaseMerge(Record):
    """One merge of the moved base branch into the job branch: the base commit merged, the
    merge commit, the batches replayed on the base's files and the validation's evidence."""

    base_sha: str
    commit: str
    at: datetime
    replayed: list[ReplayedBatch] = []
    commands: list[CommandEvidence] = []
    by: Literal["stepwise", "human"] = "stepwise"  # human: resolved at the `conflict` gate
    found: bool = False  # recorded from the branch after a worker died before saving it


class BaseConflict(Record):
    """The merge of `base_sha` conflicts where no recipe can replay: the `conflict` gate's facts."""

    base_sha: str
    files: list[str]


class BaseMoves(RecordPart):
    """What the job knows of its base's moves."""

    PART: ClassVar[str] = "base_moves"

    merges: list[BaseMerge] = []  # each merge of the moved base into the branch
    checked: str | None = None  # "<base sha>..<head sha>" last found needing no merge
    conflict: BaseConflict | None = None  # the `conflict` gate's merge, until resolved
    declined: str | None = None  # a base commit whose failed merge a human let pass
    moved_at: datetime | None = None  # server: a push to the base branch was seen


# The job's fields before they moved here -> the part's fields (jobs/kernel/record_upgrades.py).
FORMER_FIELDS = {"base_merges": "merges", "base_checked": "checked",
                 "base_conflict": "conflict", "base_declined": "declined",
                 "base_moved_at": "moved_at"}


def moves(job: Job) -> BaseMoves:
    """The job's part of base_moves (empty until the base first moves)."""
    return job.part(BaseMoves)


def merge_found(job: Job, sha: str, base_sha: str, at: datetime) -> str | None:
    """A merge of ours found on the branch, not in the record (its worker died before saving
    it): recorded, with the event's words; None when the record holds it."""
    part = moves(job)
    if any(merge.commit == sha for merge in part.merges):
        return None
    part.merges.append(BaseMerge(base_sha=base_sha, commit=sha, at=at, found=True))
    return f"merge of the base {base_sha[:7]} found on the branch as {sha[:7]}"


def base_pushed(job: Job, at: datetime) -> None:
    """Server mode: a push to the base branch was seen while the job waits; it looks when it
    resumes (the card says the base moved)."""
    moves(job).moved_at = at
