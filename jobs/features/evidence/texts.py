"""What a facet of the evidence says (pure): `FacetTexts`, its lines in each place, and the
words every facet shares, so the gate, the card, the check runs and the note speak alike."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from jobs.kernel.feature_parts import GateRow, LineMark
from jobs.kernel.job import Batch, Job

SECTION = "Evidence"  # the change note's `## Evidence`
LIST_LIMIT = 10  # `path:line` items shown in a line before "and N more"


@dataclass(frozen=True)
class FacetTexts:
    """One facet's words; each optional: a place it has nothing to say gets nothing.

    `batch` gives the batch's evidence lines: the same lines in the batch's gate, its check run
    and the note's `## Evidence`; `words` a few words for the card's batch line; `milestone`
    lines summed over a milestone (the card, the milestone gate); `plan` lines in the plan and
    at the plan gate; `job` job-wide lines (the note's section head, the `Stepwise` check run);
    `marks` the batch's annotations on its check runs; `holds` why the batch needs a person."""

    name: str
    batch: Callable[[Job, Batch], list[str]] | None = None
    words: Callable[[Job, Batch], str] | None = None
    milestone: Callable[[Job, int], list[str]] | None = None
    plan: Callable[[Job], list[str]] | None = None
    job: Callable[[Job], list[str]] | None = None
    marks: Callable[[Job, Batch], list[LineMark]] | None = None
    gates: tuple[GateRow, ...] = ()
    # Why a committed batch needs a person's look ("" when nothing): a milestone passes its gate
    # on its own (`gates.auto_approve_known_shapes`) only when no facet holds any of its batches.
    holds: Callable[[Job, Batch], str] | None = None


def listed(items: Sequence[str], limit: int = LIST_LIMIT) -> str:
    """`a`, `b`, `c` and 7 more: the first `limit` items in code, then how many are left."""
    shown = ", ".join(f"`{item}`" for item in items[:limit])
    rest = len(items) - limit
    return shown + (f" and {rest} more" if rest > 0 else "")


def share(part: int, whole: int) -> str:
    """"42 of 45 (93%)": rounded down, so 99.6% never reads as 100%."""
    percent = part * 100 // whole if whole else 100
    return f"{part} of {whole} ({percent}%)"
