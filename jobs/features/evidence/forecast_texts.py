"""What the forecast facet says (pure): the plan's forecast, and the note's forecast against the
actual figures."""

from __future__ import annotations

from jobs.features.evidence.forecast import FACET, against_lines, plan_lines
from jobs.features.evidence.record import job_evidence
from jobs.features.evidence.texts import FacetTexts
from jobs.kernel.job import Job


def plan(job: Job) -> list[str]:
    found = job_evidence(job)
    return plan_lines(job, found.history, found.forecast)


def note(job: Job) -> list[str]:
    return against_lines(job, job_evidence(job).forecast)


TEXTS = FacetTexts(FACET, plan=plan, job=note)
