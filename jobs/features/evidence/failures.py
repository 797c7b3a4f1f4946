"""The evidence facet of failed validations examined (pure; the decision and the re-runs are the
engine's: jobs/decisions/blame.py, jobs/engine/failure_check.py): under each batch, whose each
failure was (a flaky test, a pre-existing failure, a changed environment, the edit's)."""

from __future__ import annotations

from dataclasses import replace

from jobs.decisions.blame import Cause, cause_line
from jobs.features.evidence.integrity_reports import RunReport
from jobs.features.evidence.texts import FacetTexts
from jobs.kernel.job import Batch, Job
from jobs.kernel.records import FailureCheck


def batch_lines(_job: Job, batch: Batch) -> list[str]:
    """One line per examined failure of the batch's attempts, in order."""
    return [f"attempt {attempt.number}: " + cause_line(
                Cause(check.cause), command=check.command, tests=check.tests,
                parent=check.parent)
            for attempt in batch.attempts if (check := attempt.failure_check) is not None]


def _bare(test_id: str) -> str:
    return test_id.replace("::", ".").split(".")[-1].split("[")[0]


def with_flaky_passed(run: RunReport | None, check: FailureCheck | None) -> RunReport | None:
    """The figures of a run whose failing tests passed when run again (a flaky failure): those
    tests count as passed (every test the run collected, when the re-run was the whole
    command), so the test-integrity guard does not read a flaky test as a weakening."""
    if run is None or check is None or check.cause != Cause.FLAKY or not run.measured:
        return run
    names = {_bare(test) for test in check.tests}
    again = frozenset(t for t in run.ids if not names or _bare(t) in names)
    if run.ids:
        passed = run.passed + len(again - run.passed_ids)
    else:
        passed = run.collected if not names else min(run.collected, run.passed + len(names))
    return replace(run, passed=passed, passed_ids=run.passed_ids | again)


FAILURES = FacetTexts(name="failures", batch=batch_lines)
