"""What a feature adds to the pure rooms: its part of the record, its gate rows, its causes of
the `failure` gate, its batch statuses, its commits on the job branch, its sections of the
change note and its lines in the plan and the progress card.

A feature's folder (jobs/features/<name>/) builds one `FeatureParts`; the composition roots
(jobs/local.py, bot/server/context.py, the CLI) install them with `install_parts` before a
record is read, as they install the recipes, so a record that names a feature's gate (or cause)
reads back. A new gate is one `GateRow`; a new cause of `failure` one `FailureRow`; a batch status of its
own one `BatchStatusRow` (jobs/kernel/model.py); a new note
section one `NoteSection`; lines in the plan or the card are one `CardSection`; its data is a
`RecordPart` model (jobs/kernel/record_parts.py) given as `job_part` or `batch_part`, with the
record's fields it replaced as `former_fields` (and `upgrade_batch` for what a field-for-field
mapping cannot say); commits it lands are one `CommitKind`. Others read its data only as
figures by name (`figures`, `batch_figures`: a split batch's, model tokens); what the kernel and
the engine ask of it besides is a hook (`baseline_inputs`: its share of a baseline's key;
`config_reloaded`: the config was read again at the plan gate).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from jobs.kernel.gate_passes import FAILURE_PASSES, PASSES, PassRow
from jobs.kernel.job import Batch, Job
from jobs.kernel.model import (
    FAILURE_CAUSES,
    GATES,
    BatchStatusRow,
    GateRule,
    add_batch_status,
    batch_statuses,
    remove_batch_status,
)
from jobs.kernel.record_parts import (
    BATCH_PARTS,
    BATCH_UPGRADES,
    FORMER_BATCH_FIELDS,
    FORMER_JOB_FIELDS,
    JOB_PARTS,
    RecordPart,
)


class NoteSlot(StrEnum):
    """Where in the change note a feature's section goes."""

    AFTER_BATCHES = "after_batches"  # right after the batches table and the plan history
    AFTER_LEFT_OUT = "after_left_out"  # after the files left out (base merges, model usage)
    EVIDENCE = "evidence"  # after the batches' evidence, before the final review


@dataclass(frozen=True)
class GateRow:
    """One gate of a feature: its kind (a name no other gate has), when it opens and what it
    takes (the gate table's rule) and what passing it does (the pass table's row)."""

    kind: str
    rule: GateRule
    passing: PassRow


@dataclass(frozen=True)
class FailureRow:
    """A cause of its own a feature opens the `failure` gate for (a name no other cause has) and
    what passing the gate does then (its sub-row of the pass table: `approve_means` when
    `approve` is more than a retry)."""

    cause: str
    passing: PassRow


@dataclass(frozen=True)
class NoteSection:
    """A section of the change note: its lines for a job (none: the section is left out)."""

    slot: NoteSlot
    lines: Callable[[Job], list[str]]


@dataclass(frozen=True)
class LineMark:
    """A file-and-line finding a feature shows on a check run (an annotation: the uncovered
    changed lines of the evidence feature), at GitHub's levels."""

    path: str
    line: int
    message: str
    level: str = "notice"  # failure | warning | notice
    title: str = ""


@dataclass(frozen=True)
class CardSection:
    """A feature's lines in the plan and the progress card (jobs/notes/progress.py), each optional:
    a place it has nothing to say gets nothing."""

    plan: Callable[[Job], list[str]] | None = None  # the plan's list, after the branch line
    status: Callable[[Job], list[str]] | None = None  # the card, under the status and the gate
    batch: Callable[[Job, Batch], str] | None = None  # words at the end of a batch's card line
    milestone: Callable[[Job, int], list[str]] | None = None  # under a milestone's batches
    closing: Callable[[Job], list[str]] | None = None  # the card's last lines, after the batches
    gate: Callable[[Job], list[str]] | None = None  # the open gate's prompt, after its reason
    # Stepwise's check runs: lines in `Stepwise / batch K`'s and `Stepwise`'s summaries, and
    # their annotations (sent 50 a request).
    check_batch: Callable[[Job, Batch], list[str]] | None = None
    check_job: Callable[[Job], list[str]] | None = None
    marks_batch: Callable[[Job, Batch], list[LineMark]] | None = None
    marks_job: Callable[[Job], list[LineMark]] | None = None


@dataclass(frozen=True)
class CommitKind:
    """Commits a feature lands on the job branch besides batches, told by their trailer
    (jobs/kernel/trailers.py): reading the branch back (jobs/decisions/reconcile.py) counts
    them as ours, never as a batch, and records one a dead worker left unrecorded."""

    trailer: str
    landed: Callable[[Job], Iterable[str]]  # the commits of this kind the record holds
    # record one found on the branch (its sha, the trailer's value, now): the event's words, or
    # None when the record holds it already
    found: Callable[[Job, str, str, datetime], str | None]
    event: str  # the kind of the job's event that says it was found


@dataclass(frozen=True)
class FeatureParts:
    """A feature's pure parts: its part of the record, its gate rows, its commits, its note
    sections and its card sections."""

    name: str
    gates: tuple[GateRow, ...] = ()
    failure_causes: tuple[FailureRow, ...] = ()
    batch_statuses: tuple[BatchStatusRow, ...] = ()  # its own batch statuses (CI: awaiting_ci)
    note_sections: tuple[NoteSection, ...] = ()
    card_sections: tuple[CardSection, ...] = ()
    job_part: type[RecordPart] | None = None  # `Job.parts[job_part.PART]`
    batch_part: type[RecordPart] | None = None  # `Batch.parts[batch_part.PART]`
    # The job's (a batch's) fields before its data moved into the part: field -> the part's field
    former_fields: Mapping[str, str] = field(default_factory=dict)
    former_batch_fields: Mapping[str, str] = field(default_factory=dict)
    # A batch document of an earlier release read into the batch part where the fields alone
    # cannot say it (CI: each attempt's red checks): the document, changed
    upgrade_batch: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    commits: tuple[CommitKind, ...] = ()
    # The repository config's keys it owns (their schema stays in RepoConfig, jobs/inputs/config.py)
    config_keys: tuple[str, ...] = ()
    # Totals others read by name (the forecast, the metrics), never by its model: `figures`,
    # and a batch's (`batch_figures`)
    figures: Callable[[Job], Mapping[str, float]] | None = None
    batch_figures: Callable[[Batch], Mapping[str, float]] | None = None
    # Of those, the ones an observer of the previous release (the metrics) had counted of the
    # job, read from its note of what it saw as that release wrote it (CI: how many results of
    # each list): where that release counted the feature's data from the record's former
    # fields, so the first observation after an upgrade counts nothing twice
    former_figures: Callable[[Job, Mapping[str, Any]], Mapping[str, float]] | None = None
    # What a baseline's result depends on besides the tree and the commands (environments: the
    # environment's key), by name: part of the key a recorded baseline is reused under
    baseline_inputs: Callable[[Job], Mapping[str, str]] | None = None
    # The config was read again at the plan gate: forget what was made of the former one
    config_reloaded: Callable[[Job], None] | None = None


# Figures a feature gives the others (`FeatureParts.figures`), by name:
MODEL_TOKENS_IN = "model_tokens_in"  # the tokens the job's model calls sent (llm)
MODEL_TOKENS_OUT = "model_tokens_out"  # and received
# Waits for an outside verdict begun, as `outside_waits:<scope>`, and the verdicts recorded, as
# `outside_verdicts:<scope>:<outcome>` (CI: milestone or batch; passed, failed, timed_out, and
# accepted at its gate): totals the metrics count on.
OUTSIDE_WAITS = "outside_waits"
OUTSIDE_VERDICTS = "outside_verdicts"
# A batch's figures (`FeatureParts.batch_figures`), by name:
# the batch it was set aside from (bisect: a culprit of that batch's split); its failure is known,
# so the engine does not look for whose it is
SET_ASIDE_FROM = "set_aside_from"
# the subsets of its edit validated as candidate trees so far (bisect's split: the tree that
# lands may not be the last one validated); absent for a batch not split
SPLIT_VALIDATIONS = "split_validations"


# The installed features' parts by name, in the order they were installed.
INSTALLED: dict[str, FeatureParts] = {}


def install_parts(parts: Iterable[FeatureParts]) -> None:
    """Add the features' gates to the gate and pass tables, their causes of `failure` to its
    sub-rows, their note and card sections to the change note and the card. Installing the same
    parts again changes nothing; a gate kind or a cause another has is refused (ValueError)."""
    for part in parts:
        if INSTALLED.get(part.name) == part:
            continue
        if part.name in INSTALLED:
            raise ValueError(f"feature {part.name!r} is installed already with other parts")
        for row in part.gates:
            if row.kind in GATES:
                raise ValueError(f"feature {part.name!r}: gate kind {row.kind!r} is taken by "
                                 "another gate; give the feature's gate a name of its own")
        for cause in part.failure_causes:
            if cause.cause in FAILURE_CAUSES:
                raise ValueError(f"feature {part.name!r}: failure cause {cause.cause!r} is taken "
                                 "by another; give the feature's cause a name of its own")
        for status in part.batch_statuses:
            if status.word in {s.value for s in batch_statuses()}:
                raise ValueError(f"feature {part.name!r}: batch status {status.word!r} is taken; "
                                 "give the feature's status a word of its own")
        _check_record_part(part)
        for status in part.batch_statuses:
            add_batch_status(status)
        for row in part.gates:
            GATES[row.kind], PASSES[row.kind] = row.rule, row.passing
        for cause in part.failure_causes:
            FAILURE_CAUSES.add(cause.cause)
            FAILURE_PASSES[cause.cause] = cause.passing
        for models, formers, model, former in (
                (JOB_PARTS, FORMER_JOB_FIELDS, part.job_part, part.former_fields),
                (BATCH_PARTS, FORMER_BATCH_FIELDS, part.batch_part, part.former_batch_fields)):
            if model is not None:
                models[model.PART] = model
                formers.update({key: (model.PART, to) for key, to in former.items()})
        if part.batch_part is not None and part.upgrade_batch is not None:
            BATCH_UPGRADES[part.batch_part.PART] = part.upgrade_batch
        INSTALLED[part.name] = part


def _check_record_part(part: FeatureParts) -> None:
    """A part of the record needs a key of its own, and former fields need a part to go to."""
    for models, model, former in ((JOB_PARTS, part.job_part, part.former_fields),
                                  (BATCH_PARTS, part.batch_part, part.former_batch_fields)):
        if model is None:
            if former or (model is part.batch_part and part.upgrade_batch is not None):
                raise ValueError(f"feature {part.name!r} names former fields but no part of the "
                                 "record to read them into")
            continue
        if not model.PART or model.PART in models:
            raise ValueError(f"feature {part.name!r}: its part of the record needs a key no other "
                             f"part has (PART = {model.PART!r})")


def uninstall_parts(name: str) -> None:
    """Take an installed feature's parts out again (tests that install a feature of their own)."""
    part = INSTALLED.pop(name, None)
    for row in part.gates if part is not None else ():
        GATES.pop(row.kind, None)
        PASSES.pop(row.kind, None)
    for cause in part.failure_causes if part is not None else ():
        FAILURE_CAUSES.discard(cause.cause)
        FAILURE_PASSES.pop(cause.cause, None)
    for status in part.batch_statuses if part is not None else ():
        remove_batch_status(status.word)
    if part is None:
        return
    for models, formers, model in ((JOB_PARTS, FORMER_JOB_FIELDS, part.job_part),
                                   (BATCH_PARTS, FORMER_BATCH_FIELDS, part.batch_part)):
        if model is not None:
            models.pop(model.PART, None)
            if model is part.batch_part:
                BATCH_UPGRADES.pop(model.PART, None)
            for key in [key for key, (name, _) in formers.items() if name == model.PART]:
                del formers[key]


@contextmanager
def installed(parts: FeatureParts) -> Iterator[FeatureParts]:
    """`parts` installed for the length of the block."""
    install_parts([parts])
    try:
        yield parts
    finally:
        uninstall_parts(parts.name)


def note_sections(slot: NoteSlot, job: Job) -> list[str]:
    """The installed features' sections for `slot`, in the order the features were installed."""
    return [line for part in INSTALLED.values() for section in part.note_sections
            if section.slot is slot for line in section.lines(job)]


def card_sections() -> list[CardSection]:
    """The installed features' lines in the plan and the card, in the order of installing (the
    readers below are what jobs/notes/progress.py calls)."""
    return [section for part in INSTALLED.values() for section in part.card_sections]


def plan_lines(job: Job) -> list[str]:
    return [line for s in card_sections() if s.plan is not None for line in s.plan(job)]


def card_status_lines(job: Job) -> list[str]:
    return [line for s in card_sections() if s.status is not None for line in s.status(job)]


def card_batch_words(job: Job, batch: Batch) -> str:
    return "".join(s.batch(job, batch) for s in card_sections() if s.batch is not None)


def card_milestone_lines(job: Job, milestone: int) -> list[str]:
    return [line for s in card_sections() if s.milestone is not None
            for line in s.milestone(job, milestone)]


def card_closing_lines(job: Job) -> list[str]:
    return [line for s in card_sections() if s.closing is not None for line in s.closing(job)]


def gate_lines(job: Job) -> list[str]:
    return [line for s in card_sections() if s.gate is not None for line in s.gate(job)]


def check_batch_lines(job: Job, batch: Batch) -> list[str]:
    return [line for s in card_sections() if s.check_batch is not None
            for line in s.check_batch(job, batch)]


def check_job_lines(job: Job) -> list[str]:
    return [line for s in card_sections() if s.check_job is not None for line in s.check_job(job)]


def batch_marks(job: Job, batch: Batch) -> list[LineMark]:
    return [mark for s in card_sections() if s.marks_batch is not None
            for mark in s.marks_batch(job, batch)]


def job_marks(job: Job) -> list[LineMark]:
    return [mark for s in card_sections() if s.marks_job is not None for mark in s.marks_job(job)]


def commit_kinds() -> list[CommitKind]:
    """The installed features' kinds of commits on the job branch."""
    return [kind for part in INSTALLED.values() for kind in part.commits]


def landed_commits(job: Job) -> set[str]:
    """The commits the features recorded landing on the job branch (base merges, ...)."""
    return {sha for kind in commit_kinds() for sha in kind.landed(job)}


def batch_figures(batch: Batch) -> dict[str, float]:
    """The installed features' figures of `batch` (a figure no feature gives is absent)."""
    return {name: value for part in INSTALLED.values() if part.batch_figures is not None
            for name, value in part.batch_figures(batch).items()}


def baseline_inputs(job: Job) -> dict[str, str]:
    """What the installed features say a baseline of `job` depends on (jobs/engine/baseline.py)."""
    return {name: value for part in INSTALLED.values() if part.baseline_inputs is not None
            for name, value in part.baseline_inputs(job).items()}


def config_reloaded(job: Job) -> None:
    """Tell the installed features the job's config was read again (at the plan gate)."""
    for part in INSTALLED.values():
        if part.config_reloaded is not None:
            part.config_reloaded(job)


def figures(job: Job) -> dict[str, float]:
    """The installed features' figures of `job` (a figure no feature gives is absent)."""
    return {name: value for part in INSTALLED.values() if part.figures is not None
            for name, value in part.figures(job).items()}


def former_figures(job: Job, note: Mapping[str, Any]) -> dict[str, float]:
    """The installed features' figures of `job` that the previous release's observer had
    counted, by its `note` of what it saw (`FeatureParts.former_figures`; none of a feature
    that gives no such reading)."""
    return {name: value for part in INSTALLED.values() if part.former_figures is not None
            for name, value in part.former_figures(job, note).items()}
