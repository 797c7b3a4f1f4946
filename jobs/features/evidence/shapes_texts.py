"""What the edit-shapes facet says (pure): each batch's, milestone's and the plan's dry run's
shapes with their counts and one example each, outliers first ("review first"); which shapes a
person approved at a gate; and why a milestone can or cannot pass its gate on its own
(`gates.auto_approve_known_shapes`)."""

from __future__ import annotations

from jobs.decisions.edit_shapes import ShapeSummary, sum_summaries
from jobs.features.evidence.coverage_texts import UNCOVERED_CHANGE
from jobs.features.evidence.record import batch_evidence, job_evidence
from jobs.features.evidence.texts import FacetTexts
from jobs.kernel.job import Batch, Job
from jobs.kernel.model import BatchStatus
from jobs.notes.shape_lines import summary_lines

FACET = "shapes"  # the facet's name (its record: `BatchEvidence.shapes`)
# Gates whose approval of a batch is a person's look at its hunks (tests_weakened: item 1).
LOOKED_AT = (UNCOVERED_CHANGE, "tests_weakened")
BATCH_SHAPES, MILESTONE_SHAPES = 5, 10  # shapes listed; the rest are counted
PASSED_ON_ITS_OWN = ("passed its gate on its own (`gates.auto_approve_known_shapes`): every hunk "
                     "has a shape approved at an earlier gate, it is green and covered, and no "
                     "test was weakened")


def shapes_of(batch: Batch) -> ShapeSummary | None:
    return batch_evidence(batch).shapes


def approved_keys(job: Job) -> set[str]:
    """The shapes a person approved: the plan's dry run once the plan gate was passed (when it
    is shown, `require_plan_approval`, and not passed by `--yes`), every batch of an approved
    milestone, and batches passed at a gate that shows their hunks (`uncovered_change`,
    `tests_weakened`)."""
    keys: set[str] = set()
    preview = job_evidence(job).preview
    if preview is not None and job.approved_digest and job.config.require_plan_approval and \
            not passed_by_yes(job, "plan-"):
        keys |= preview.shapes.keys()
    for batch in job.batches:
        looked = batch.milestone in job.approved_milestones or \
            any(kind in batch.approved_gates for kind in LOOKED_AT)
        if looked and batch.commit and (found := shapes_of(batch)) is not None:
            keys |= found.keys()
    return keys


def passed_by_yes(job: Job, gate_id_prefix: str) -> bool:
    """Whether a gate of that kind was passed by `--yes` (local mode), which no person saw."""
    return any(e.kind == "gate" and e.message.startswith(gate_id_prefix)
               and e.message.endswith("passed by --yes") for e in job.events)


def batch_lines(job: Job, batch: Batch) -> list[str]:
    found = shapes_of(batch)
    return summary_lines(found, limit=BATCH_SHAPES, approved=approved_keys(job)) if found else []


def card_words(job: Job, batch: Batch) -> str:
    found = shapes_of(batch)
    if not found or not found.hunks:
        return ""
    outliers = len(found.outliers())
    return f"{len(found.shapes)} edit shapes" + (f" ({outliers} to review first)" if outliers else "")


def milestone_summary(job: Job, milestone: int) -> ShapeSummary:
    return sum_summaries(found for batch in job.milestone_batches(milestone)
                         if batch.commit and (found := shapes_of(batch)) is not None)


def unknown_hunks(job: Job, milestone: int) -> int:
    approved = approved_keys(job)
    summary = milestone_summary(job, milestone)
    return sum(s.count for s in summary.shapes if s.key not in approved) + summary.other_hunks


def auto_passed(job: Job) -> list[int]:
    found = job_evidence(job).auto_passed
    return found.milestones if found is not None else []


def milestone_lines(job: Job, milestone: int) -> list[str]:
    lines = summary_lines(milestone_summary(job, milestone), limit=MILESTONE_SHAPES,
                          approved=approved_keys(job))
    if milestone in auto_passed(job):
        lines.append(f"milestone {milestone} {PASSED_ON_ITS_OWN}")
    elif job.config.gates.auto_approve_known_shapes and job.gate is not None and \
            job.gate.milestone == milestone and (unknown := unknown_hunks(job, milestone)):
        lines.append(f"not passed on its own: {unknown} hunks have shapes no gate approved yet")
    return lines


def job_lines(job: Job) -> list[str]:
    """The note's and the `Stepwise` check run's: the milestones that passed on their own."""
    passed = auto_passed(job)
    if not passed:
        return []
    if len(passed) == 1:
        return [f"milestone {passed[0]} {PASSED_ON_ITS_OWN}"]
    return [f"milestones {', '.join(map(str, passed))} passed their gates on their own "
            f"(`gates.auto_approve_known_shapes`): every hunk had a shape approved at an earlier "
            "gate, each was green and covered, and no test was weakened"]


def plan_lines(job: Job) -> list[str]:
    preview = job_evidence(job).preview
    if preview is None:
        return []
    title = f"edit shapes of a dry run of batch {preview.batch} ({preview.files} files)"
    return summary_lines(preview.shapes, limit=MILESTONE_SHAPES, approved=set(), title=title) or \
        [f"{title}: no change"]


def holds(job: Job, batch: Batch) -> str:
    """A committed batch with a hunk of a shape no gate approved needs a person."""
    if batch.status is not BatchStatus.COMPLETED:
        return ""
    found = shapes_of(batch)
    if found is None:
        return "its edit shapes were not recorded"
    unknown = sum(s.count for s in found.shapes if s.key not in approved_keys(job)) + \
        found.other_hunks
    return f"{unknown} of its hunks have shapes no gate approved" if unknown else ""


TEXTS = FacetTexts(FACET, batch=batch_lines, words=card_words, milestone=milestone_lines,
                   plan=plan_lines, job=job_lines, holds=holds)
