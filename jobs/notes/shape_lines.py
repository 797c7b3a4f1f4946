"""Edit shapes in words (pure): a summary's distinct shapes with their counts and one example
each, outliers first ("review first"); one renderer for the gates, the card, the note and a
campaign's dashboard (jobs/decisions/edit_shapes.py groups the hunks)."""

from __future__ import annotations

from jobs.basics import markdown_safe as md
from jobs.decisions.edit_shapes import Shape, ShapeSummary


def shape_line(summary: ShapeSummary, shape: Shape, approved: set[str]) -> str:
    share = shape.count * 100 // summary.hunks if summary.hunks else 100
    hunks = "1 hunk" if shape.count == 1 else f"{shape.count} hunks"
    lead = "review first: " if summary.is_outlier(shape) else ""
    seen = ", seen once" if shape.count == 1 else f" ({share}%)"
    known = " (approved earlier)" if shape.key in approved else ""
    # The hunk's text is the repository's (and the spec's): shown through the one renderer of
    # untrusted text, so a backtick in it cannot end the code span and make the rest live.
    return (f"{lead}{hunks}{seen} like {md.code(shape.example)}: {md.code(shape.before or '∅')}"
            f" → {md.code(shape.after or '∅')}{known}")


def summary_lines(summary: ShapeSummary, *, limit: int, approved: set[str],
                  title: str = "edit shapes") -> list[str]:
    """A head line ("edit shapes: 3 kinds of edit in 9 hunks, 1 to review first"), then up to
    `limit` shapes, outliers first, and what was left out; none for a summary without hunks."""
    if not summary.hunks:
        return []
    kinds = len(summary.shapes) + (1 if summary.other_hunks else 0)
    outliers = len(summary.outliers())
    head = f"{title}: {kinds} {'kind' if kinds == 1 else 'kinds'} of edit in {summary.hunks} " \
        f"{'hunk' if summary.hunks == 1 else 'hunks'}" + \
        (f", {outliers} to review first" if outliers else "")
    shown = summary.ordered()[:limit]
    lines = [head, *[shape_line(summary, shape, approved) for shape in shown]]
    rest = summary.hunks - sum(shape.count for shape in shown)
    if rest > 0:
        lines.append(f"and {rest} more hunks of {kinds - len(shown)} other shapes")
    return lines
