"""What the forecast facet says (pure): the plan's forecast, and the note's forecast against the
actual figures."""

from __future__ import annotations

from jobs.features.evidence.forecast import (
    FACET,
    HISTORY,
    Forecast,
    History,
    against_lines,
    plan_lines,
)
from jobs.features.evidence.record import job_facet
from jobs.features.evidence.texts import FacetTexts
from jobs.kernel.job import Job


def plan(job: Job) -> list[str]:
    return plan_lines(job, job_facet(job, HISTORY, History), job_facet(job, FACET, Forecast))


def note(job: Job) -> list[str]:
    return against_lines(job, job_facet(job, FACET, Forecast))


TEXTS = FacetTexts(FACET, plan=plan, job=note)
