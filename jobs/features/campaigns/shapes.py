"""A campaign's edit shapes (pure): each repository's (its preview's dry run, then its job's
committed batches) kept small in its entry, and summed over all of them for the dashboard, so
one review covers every repository: the distinct shapes with their counts and one example each,
outliers first ("review first")."""

from __future__ import annotations

from jobs.decisions.edit_shapes import ShapeSummary, sum_summaries
from jobs.features.campaigns.record import Campaign, RepoState
from jobs.notes.shape_lines import summary_lines

ENTRY_SHAPES = 20  # shapes an entry keeps (most seen first); the rest count as other hunks
SHOWN = 10  # shapes the dashboard lists; the rest are counted
NOT_SUMMED = frozenset({RepoState.LEFT_OUT, RepoState.SKIPPED})


def entry_shapes(summary: ShapeSummary, repo: str) -> ShapeSummary:
    """`summary` as a repository's entry keeps it: each example names the repository, at most
    ENTRY_SHAPES shapes (a record of hundreds of repositories stays small)."""
    shapes = [shape.model_copy(update={"example": f"{repo}: {shape.example}", "form": ""})
              for shape in summary.shapes]
    kept, rest = shapes[:ENTRY_SHAPES], shapes[ENTRY_SHAPES:]
    return ShapeSummary(hunks=summary.hunks, shapes=kept,
                        other_hunks=summary.other_hunks + sum(s.count for s in rest))


def campaign_shapes(campaign: Campaign) -> tuple[ShapeSummary, int]:
    """The shapes of every repository still in the campaign, summed; and how many had some."""
    found = [entry.shapes for entry in campaign.entries()
             if entry.shapes is not None and entry.shapes.hunks and entry.state not in NOT_SUMMED]
    return sum_summaries(found), len(found)


def dashboard_lines(campaign: Campaign) -> list[str]:
    """The dashboard's section: the summed shapes, outliers first; none before any edit."""
    summary, repos = campaign_shapes(campaign)
    lines = summary_lines(summary, limit=SHOWN, approved=set(),
                          title=f"Edit shapes summed over {repos} "
                                f"{'repository' if repos == 1 else 'repositories'}")
    if not lines:
        return []
    return ["", f"### {lines[0]}", "",
            "One review covers every repository: each kind of edit once, with how often it "
            "was made and one example (the preview's dry run until a repository's job commits, "
            "then its committed batches); review the outliers first.", "",
            *(f"- {line}" for line in lines[1:])]
