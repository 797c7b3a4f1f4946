"""`retry` at `ci_failed`: ask CI to run the failed checks again where GitHub lets the App, and
keep the gate open, saying what to press on GitHub, for those it cannot re-run (never a wait
for a re-run that nobody started)."""

from __future__ import annotations

from jobs.decisions.ci import CheckObservation, CiVerdict
from jobs.engine.context import JobContext
from jobs.features.ci.port import ci_of
from jobs.features.ci.record import CiWait, results_of

RERUN_REFUSED = (
    "`retry` could not re-run every failed check of {what}:\n{lines}\n\n"
    "Start them on GitHub as said, then `retry` again: Stepwise waits for the new results "
    "(or `approve` to accept the failure as it is)")


def rerun_failed(engine: JobContext, wait: CiWait, verdict: CiVerdict, what: str) -> str | None:
    """Re-run what failed on the wait's commit. None when every failed check was re-run (or
    none needed it: new runs are under way) and the job waits again; else the `ci_failed`
    gate's reason naming the checks that could not be re-run and what to press instead."""
    job = engine.job
    again = tuple(c for c in (verdict.failing or verdict.checks) if c.done and not c.passed)
    refused = ci_of(engine).rerun_checks(job, wait.sha, again) if again else []
    not_rerun = {(r.check.name, r.check.run_id) for r in refused}
    rerun = [c for c in again if (c.name, c.run_id) not in not_rerun]
    for result in results_of(job, wait.scope, wait.number):
        if result.sha == wait.sha and rerun:
            result.retried = True
    wait.rerun, wait.since = False, engine.now()
    wait.rerun_of = [*wait.rerun_of, *(_key(c) for c in rerun if c.run_id)]
    engine.event("ci", f"re-ran {', '.join(c.name for c in rerun) or 'no check'}"
                 + (f"; could not re-run {', '.join(r.check.name for r in refused)}"
                    if refused else ""))
    if not refused:
        return None
    return RERUN_REFUSED.format(what=what, lines="\n".join(f"- {r.instead}" for r in refused))


def _key(check: CheckObservation) -> str:
    return f"{check.name}#{check.run_id}"
