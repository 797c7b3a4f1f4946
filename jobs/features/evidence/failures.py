"""The evidence facet of failed validations examined (pure; the decision and the re-runs are the
engine's: jobs/decisions/blame.py, jobs/engine/failure_check.py): under each batch, whose each
failure was (a flaky test, a pre-existing failure, a changed environment, the edit's)."""

from __future__ import annotations

from jobs.decisions.blame import Cause, cause_line
from jobs.features.evidence.texts import FacetTexts
from jobs.kernel.job import Batch, Job


def batch_lines(_job: Job, batch: Batch) -> list[str]:
    """One line per examined failure of the batch's attempts, in order."""
    return [f"attempt {attempt.number}: " + cause_line(
                Cause(check.cause), command=check.command, tests=check.tests,
                parent=check.parent)
            for attempt in batch.attempts if (check := attempt.failure_check) is not None]


FAILURES = FacetTexts(name="failures", batch=batch_lines)
