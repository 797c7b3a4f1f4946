"""The evidence feature's pure parts (installed by the composition roots): its facets' gate rows,
the change note's `## Evidence` section and its lines in the plan, the card, the gates and
Stepwise's check runs, the same lines in each."""

from __future__ import annotations

from jobs.basics import markdown_safe as md
from jobs.features.evidence.facets import FACETS
from jobs.features.evidence.record import BatchEvidence, JobEvidence
from jobs.features.evidence.texts import SECTION
from jobs.kernel.feature_parts import CardSection, FeatureParts, LineMark, NoteSection, NoteSlot
from jobs.kernel.job import Batch, Job


def batch_lines(job: Job, batch: Batch) -> list[str]:
    """The batch's evidence, facet by facet: the words of its gate, check run and note."""
    return [line for facet in FACETS if facet.batch is not None for line in facet.batch(job, batch)]


def job_lines(job: Job) -> list[str]:
    return [line for facet in FACETS if facet.job is not None for line in facet.job(job)]


def plan_lines(job: Job) -> list[str]:
    """Each facet's plan lines as an item of the plan's list, its later lines under it."""
    return [("- " if index == 0 else "  - ") + line for facet in FACETS if facet.plan is not None
            for index, line in enumerate(facet.plan(job))]


def milestone_lines(job: Job, milestone: int) -> list[str]:
    return [line for facet in FACETS if facet.milestone is not None
            for line in facet.milestone(job, milestone)]


def card_milestone_lines(job: Job, milestone: int) -> list[str]:
    """Under a milestone's batches on the card, unless its gate is open (the prompt says it):
    a list of its own after a blank line (a line right after the batches' list would be read
    as the last batch's, on GitHub and in the terminal alike)."""
    if job.gate is not None and job.gate.milestone == milestone:
        return []
    section = milestone_section(job, milestone)
    return ["", *section] if section else []


def milestone_section(job: Job, milestone: int) -> list[str]:
    return titled(f"{SECTION} of milestone {milestone}:", milestone_lines(job, milestone))


def titled(title: str, lines: list[str]) -> list[str]:
    """`lines` as a list under `title`; nothing when there are none."""
    return [title, *[f"- {line}" for line in lines]] if lines else []


def card_words(job: Job, batch: Batch) -> str:
    words = [said for facet in FACETS if facet.words is not None if (said := facet.words(job, batch))]
    return "".join(f" · {said}" for said in words)


def marks(job: Job, batch: Batch) -> list[LineMark]:
    return [mark for facet in FACETS if facet.marks is not None for mark in facet.marks(job, batch)]


def all_marks(job: Job) -> list[LineMark]:
    return [mark for batch in job.batches if batch.commit for mark in marks(job, batch)]


def note_lines(job: Job) -> list[str]:
    """`## Evidence`: the job-wide lines, then each batch's evidence under its number."""
    body = [f"- {md.message(line)}" for line in job_lines(job)]
    for batch in job.batches:
        lines = batch_lines(job, batch)
        if lines:
            body += [f"- Batch {batch.number}:", *[f"  - {md.message(line)}" for line in lines]]
    return ["", f"## {SECTION}", "", *body] if body else []


def gate_lines(job: Job) -> list[str]:
    """At a batch's gate its evidence; at a milestone's, the milestone's."""
    gate = job.gate
    if gate is None:
        return []
    if gate.batch is not None:
        return titled(f"{SECTION} of batch {gate.batch}:", batch_lines(job, job.batch(gate.batch)))
    if gate.milestone is not None:
        return milestone_section(job, gate.milestone)
    return []


PARTS = FeatureParts(
    name="evidence",
    gates=tuple(row for facet in FACETS for row in facet.gates),
    note_sections=(NoteSection(NoteSlot.EVIDENCE, note_lines),),
    config_keys=("evidence",),
    job_part=JobEvidence,
    batch_part=BatchEvidence,
    card_sections=(CardSection(plan=plan_lines, batch=card_words, milestone=card_milestone_lines,
                               gate=gate_lines, check_batch=batch_lines, check_job=job_lines,
                               marks_batch=marks, marks_job=all_marks),),
)
