"""What the card and the change note say of split batches and of `batch_size: auto` (pure:
functions of the record), as the feature's card and note sections (`PARTS`)."""

from __future__ import annotations

from jobs.features.bisect.record import (
    FORMER_BATCH_FIELDS,
    BatchSplit,
    SplitState,
    batch_figures,
    bisect_of,
)
from jobs.inputs.batch_sizes import is_auto
from jobs.kernel.feature_parts import CardSection, FeatureParts, NoteSection, NoteSlot
from jobs.kernel.job import Batch, Job


def cause_words(kind: str, files: list[str], *, by_ci: bool = False) -> str:
    """How the card, the gate and the note name one set-aside group of files (`by_ci`: a red
    CI check split the batch, so CI is what these files fail, not the local validation)."""
    named = ", ".join(f"`{path}`" for path in files)
    judge = "CI" if by_ci else "validation"
    if kind == "interaction":
        return f"{named} pass alone and fail {judge} together (an interaction)"
    if kind == "targets_remain":
        return f"{named}: `find` matches remain after the edit"
    return f"{named} fails {judge} alone"


def set_aside_into(job: Job, batch: Batch) -> list[Batch]:
    return [other for other in job.batches if bisect_of(other).split_from == batch.number]


def set_aside_words(job: Job, batch: Batch) -> str:
    """Why a set-aside batch was set aside, judged as its split was (validation or CI)."""
    source = next((b for b in job.batches if b.number == bisect_of(batch).split_from), None)
    state = bisect_of(source).split if source is not None else None
    by_ci = bool(state and state.by_ci)
    return cause_words(bisect_of(batch).split_kind or "culprit", batch.files, by_ci=by_ci)


def validation_words(state: SplitState) -> str:
    """What finding the causes cost: the validations after the batch's own failed run (those
    on the failing tests only, and whole), per cause set aside."""
    after = state.results[1:]
    causes = len([c for c in state.causes if c.kind != "targets_remain"])
    focused = sum(1 for r in after if r.focus)
    kinds = f" ({focused} on the failing tests only, {len(after) - focused} whole)" \
        if focused else ""
    per = f": {len(after) / causes:.1f} a cause" if causes else ""
    return (f"{len(after)} validation{'s' if len(after) != 1 else ''}{kinds} for {causes} "
            f"cause{'s' if causes != 1 else ''}{per}")


def split_words(job: Job, batch: Batch) -> str:
    """The card's words after a batch line: why it was split and where its files went, or
    which split it came from."""
    state = bisect_of(batch).split
    if state is not None and state.finished and not state.gave_up:
        moved = "; ".join(
            f"{set_aside_words(job, other)}: set aside as batch "
            f"{other.number}" for other in set_aside_into(job, batch))
        return (f" — split after {state.reason} ({len(state.results)} subsets validated): "
                f"{moved or 'nothing set aside'}")
    if state is not None and not state.finished:
        return f" — splitting after {state.reason} ({len(state.results)} subsets validated)"
    if bisect_of(batch).split_from is not None:
        return (f" — set aside from batch {bisect_of(batch).split_from}: "
                f"{set_aside_words(job, batch)}")
    return ""


CARD_SPLIT_LINES = 20  # the card lists at most this many split batches (the note has all)


def split_card_lines(job: Job) -> list[str]:
    """The card's list of split batches, shown even when their milestone is folded."""
    split = [b for b in job.batches
             if (state := bisect_of(b).split) is not None and state.finished and not state.gave_up]
    if not split:
        return []
    lines = ["", "Split batches:"]
    lines += [f"- batch {b.number}{split_words(job, b)}" for b in split[:CARD_SPLIT_LINES]]
    if len(split) > CARD_SPLIT_LINES:
        lines.append(f"- … and {len(split) - CARD_SPLIT_LINES} more (listed in the change note)")
    return lines


def auto_size_line(job: Job) -> list[str]:
    """`batch_size: auto`: the sizes chosen so far, in the card."""
    if not is_auto(job.spec.batch_size, job.config.batch_size):
        return []
    chosen = [str(bisect_of(b).auto_size) for b in job.batches if bisect_of(b).auto_size]
    return ["", "Batch sizes chosen (auto): " + (", ".join(chosen) or "none yet")]


def closing_lines(job: Job) -> list[str]:
    """The card's last lines: the split batches, then the `auto` sizes chosen."""
    return split_card_lines(job) + auto_size_line(job)


def split_note_lines(job: Job) -> list[str]:
    """The change note's section on split batches: what each split set aside and why."""
    split = [b for b in job.batches if (state := bisect_of(b).split) is not None and state.finished]
    if not split:
        return []
    lines = ["", "## Split batches", ""]
    for batch in split:
        state = bisect_of(batch).split
        assert state is not None
        if state.gave_up:
            lines.append(f"- batch {batch.number}: not split ({state.gave_up})")
            continue
        how = f"split {state.how}; " if state.how else ""
        lines.append(f"- batch {batch.number} failed with all {len(state.files)} files "
                     f"({state.reason}); {how}{len(state.results)} subsets validated, "
                     f"{validation_words(state)}; committed {len(batch.files)} files")
        lines += [f"  - batch {other.number}: "
                  f"{set_aside_words(job, other)} — {other.status}"
                  for other in set_aside_into(job, batch)]
    return lines


PARTS = FeatureParts(
    "bisect",
    note_sections=(NoteSection(NoteSlot.AFTER_BATCHES, split_note_lines),),  # "## Split batches"
    card_sections=(CardSection(batch=split_words, closing=closing_lines),),
    batch_part=BatchSplit,
    former_batch_fields=FORMER_BATCH_FIELDS,
    batch_figures=batch_figures,
)
