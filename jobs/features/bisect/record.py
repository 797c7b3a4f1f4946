"""The bisect feature's part of a batch's record (pure): `Batch.parts["bisect"]`, read with
`BatchSplit` (installed through notes.py's `PARTS`, so a stored record is checked against it):
the bisection of a failed batch (which subsets were validated with which result, what was set
aside and why), where a set-aside batch came from, and the size `batch_size: auto` chose. Records
written before the part existed kept these as the batch's fields `split`, `split_from`,
`split_kind` and `auto_size`; `FORMER_BATCH_FIELDS` reads them into it. Others read it by
figure (`batch_figures`: `SET_ASIDE_FROM`, `SPLIT_VALIDATIONS`, jobs/kernel/feature_parts.py),
never this model."""

from __future__ import annotations

from typing import ClassVar, Literal

from jobs.kernel.feature_parts import SET_ASIDE_FROM, SPLIT_VALIDATIONS
from jobs.kernel.job import Batch
from jobs.kernel.record_parts import RecordPart, part_read
from jobs.kernel.records import CommandEvidence, Record

# culprit: fails alone; interaction: passes alone, fails with the other files named;
# targets_remain: the edit left `find` matches in it (done_when: no_matches).
CauseKind = Literal["culprit", "interaction", "targets_remain"]


class SubsetResult(Record):
    """One validated candidate tree: the base plus the edits of `files`."""

    files: list[str]
    passed: bool
    tree: str = ""
    failed_command: str = ""  # the first command that failed, when it did
    commands: list[CommandEvidence] = []  # kept for a passing subset: a commit's evidence
    # Run on the failing tests only: the command run instead of the whole validation (a
    # failure proves the subset fails; a pass is confirmed by a whole validation).
    focus: list[str] = []
    # A whole validation that failed and named its failing tests: the command that runs only
    # those, which its parts are validated on first (empty: the whole validation).
    refocus: list[str] = []


class SplitCause(Record):
    """Files set aside from a split batch, and why."""

    files: list[str]
    kind: CauseKind


class SplitState(Record):
    """A failed multi-file batch being split: kept after every validation, so a crash resumes
    the bisection without validating a decided subset again."""

    files: list[str]  # every file of the batch as planned
    edited_tree: str  # the failing attempt's tree: each subset takes its files from it
    reason: str  # why it was split: the failure of the whole batch
    alone: bool = False  # each file validated alone first (a small batch), else halves
    how: str = ""  # how it was split, in words (the plan: strategy.py)
    results: list[SubsetResult] = []
    causes: list[SplitCause] = []  # decided once the bisection ends
    finished: bool = False
    gave_up: str = ""  # the bisection stopped without an answer (the failure gate opened)
    committed: bool = False  # its passing files were committed (or it had none)
    # A red CI check split it (`ci.wait: per_batch`): each subset that passes locally is pushed
    # as a candidate commit and validated by CI too; `named` are the batch's files the failing
    # checks' annotations name (validated without them first).
    by_ci: bool = False
    named: list[str] = []
    candidate: SubsetResult | None = None  # passed locally; CI runs on `candidate_sha`
    candidate_sha: str = ""

    @property
    def set_aside(self) -> list[str]:
        return [path for cause in self.causes for path in cause.files]

    def result_of(self, files: list[str]) -> SubsetResult | None:
        """The latest whole validation of exactly these files."""
        wanted = frozenset(files)
        return next((r for r in reversed(self.results)
                     if frozenset(r.files) == wanted and not r.focus), None)


class BatchSplit(RecordPart):
    """What bisect knows of one batch."""

    PART: ClassVar[str] = "bisect"

    split: SplitState | None = None  # the bisection of this failed batch
    split_from: int | None = None  # set aside from that batch's split
    split_kind: CauseKind | None = None  # why it was set aside
    auto_size: int = 0  # `batch_size: auto`: the size chosen when it started


# The batch's fields before they moved here -> the part's fields (jobs/kernel/record_upgrades.py).
FORMER_BATCH_FIELDS = {"split": "split", "split_from": "split_from", "split_kind": "split_kind",
                       "auto_size": "auto_size"}


def bisect_part(batch: Batch) -> BatchSplit:
    """The batch's part of bisect, to change (put there, empty, when it has none)."""
    return batch.part(BatchSplit)


def bisect_of(batch: Batch) -> BatchSplit:
    """The batch's part of bisect, to read (an empty one, not kept, when it has none)."""
    return part_read(batch.parts, BatchSplit)


def batch_figures(batch: Batch) -> dict[str, float]:
    """What others read of a batch's split by figure name: the batch it was set aside from, the
    subsets of its edit validated so far (absent when it was not split)."""
    part = bisect_of(batch)
    figures: dict[str, float] = {}
    if part.split_from is not None:
        figures[SET_ASIDE_FROM] = part.split_from
    if part.split is not None:
        figures[SPLIT_VALIDATIONS] = len(part.split.results)
    return figures
