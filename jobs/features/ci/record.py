"""The CI feature's part of the record (pure): `Job.parts["ci"]` (`CiJob`: the wait for CI's
verdict on one commit, holding no worker, and each milestone head's results) and
`Batch.parts["ci"]` (`CiBatch`: a batch commit's results, per_batch, and the red checks that
withdrew an attempt's commit), installed through parts.py so a stored record is checked against
them. Records written before the part existed kept these as the job's `ci_wait` and
`ci_results`, the batch's `ci_results` and each attempt's `ci_checks`; `FORMER_FIELDS`,
`FORMER_BATCH_FIELDS` and `upgrade_batch` read them into it.

The wait is the kernel's one generic notion of CI (jobs/kernel/record_parts.py `Awaited`): a
job whose part awaits a commit's checks is not active, a cancel stops the wait, and the server
wakes the job when a check on that commit reports. Everything else here is CI's own.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any, ClassVar, Literal

from pydantic import BaseModel

from jobs.kernel.feature_parts import OUTSIDE_VERDICTS, OUTSIDE_WAITS
from jobs.kernel.job import Batch, Job
from jobs.kernel.model import BatchStatus, BatchStatusRow
from jobs.kernel.record_parts import Awaited, RecordPart
from jobs.kernel.records import Record


class CiCheck(Record):
    """One required check as last seen: its name, state and link."""

    name: str
    status: str  # queued | in_progress | completed
    conclusion: str | None = None
    url: str = ""


class CiWait(Record):
    """The job waits for the repository's CI on `sha` (server mode); it holds no worker
    meanwhile: a CI webhook on `sha`, or the reconciler, queues its next step."""

    sha: str
    since: datetime
    scope: Literal["milestone", "batch"]
    number: int  # the milestone's or the batch's number
    progress: str = ""  # the verdict's line: "waiting for CI: 3 of 5 checks done"
    checks: list[CiCheck] = []
    checked_at: datetime | None = None  # when the checks were last read
    rerun: bool = False  # `retry` at ci_failed: re-run the failing checks, then wait again
    rerun_of: list[str] = []  # "name#run id" of the runs re-requested: their re-runs count


class CiResult(Record):
    """What the repository's CI said about one milestone's head or one batch's commit: the
    required checks as they finished, and whether a failure was accepted at `ci_failed`."""

    scope: Literal["milestone", "batch"]
    number: int
    sha: str
    state: str  # passed | failed | timed_out (jobs.decisions.ci.CiState)
    at: datetime
    checks: list[CiCheck] = []
    required_from: str = ""  # ci.checks | the base branch's required checks | every check ...
    accepted: bool = False  # `approve` at the ci_failed gate took it as it is
    retried: bool = False  # `retry` re-ran its failed checks


class CiWithdrawal(Record):
    """per_batch: the red checks that withdrew one attempt's commit (the attempt `ci_failed`)."""

    attempt: int
    checks: list[CiCheck] = []


class CiJob(RecordPart):
    """What the job knows of the repository's CI: the wait under way, each milestone's results."""

    PART: ClassVar[str] = "ci"

    wait: CiWait | None = None  # running, but waiting for the repository's CI (no worker)
    results: list[CiResult] = []  # what the repository's CI said of each milestone's head
    waited: dict[str, int] = {}  # the waits begun, by scope (the metrics count them)

    def awaited(self) -> Awaited | None:
        wait = self.wait
        if wait is None:
            return None
        return Awaited(sha=wait.sha, looked_at=wait.checked_at or wait.since,
                       says=wait.progress or f"job is waiting for CI on {wait.sha[:7]}",
                       revertible=wait.scope == "milestone")

    def stop_waiting(self) -> None:
        self.wait = None


class CiBatch(RecordPart):
    """What the repository's CI said of one batch's commit (per_batch), kept with the batch so
    a job of many batches keeps a small document."""

    PART: ClassVar[str] = "ci"

    results: list[CiResult] = []
    withdrawn: list[CiWithdrawal] = []  # the attempts whose commit a red check withdrew


# per_batch: a pushed batch whose commit waits for CI's verdict (DESIGN.md's batch status): it
# enters from `in_progress` (pushed) or, adopted from the branch, from `pending` or `failed`;
# green completes it, red withdraws the candidate (a failed attempt, or pending when it went
# back without one), `skip` at ci_failed skips it. Its commit passed the batch's validation.
AWAITING_CI = "awaiting_ci"
AWAITING_CI_ROW = BatchStatusRow(
    AWAITING_CI,
    entered_from=frozenset({BatchStatus.PENDING, BatchStatus.IN_PROGRESS, BatchStatus.FAILED}),
    leaves_to=frozenset({BatchStatus.COMPLETED, BatchStatus.FAILED, BatchStatus.PENDING,
                         BatchStatus.SKIPPED}),
    mark="⧗", validated=True, counted_as="awaiting CI")


def awaiting_ci() -> BatchStatus:
    """The status `awaiting_ci` (a member of BatchStatus once CI is installed)."""
    return BatchStatus(AWAITING_CI)


# The job's (a batch's) fields before they moved here -> the part's fields
# (jobs/kernel/record_upgrades.py); each attempt's `ci_checks` is read by `upgrade_batch`.
FORMER_FIELDS = {"ci_wait": "wait", "ci_results": "results"}
FORMER_BATCH_FIELDS = {"ci_results": "results"}
_FORMER_ATTEMPT_FIELD = "ci_checks"


def upgrade_batch(doc: dict[str, Any]) -> dict[str, Any]:
    """A batch document of an earlier release with its attempts' red checks (`ci_checks`) moved
    to the batch's part as withdrawals; a part written since keeps what it holds."""
    attempts = doc.get("attempts")
    if not isinstance(attempts, list) or not any(
            isinstance(a, dict) and _FORMER_ATTEMPT_FIELD in a for a in attempts):
        return doc
    kept: list[Any] = []
    withdrawn: list[dict[str, Any]] = []
    for attempt in attempts:
        if isinstance(attempt, dict) and _FORMER_ATTEMPT_FIELD in attempt:
            attempt = dict(attempt)
            checks = attempt.pop(_FORMER_ATTEMPT_FIELD)
            if checks:
                withdrawn.append({"attempt": attempt.get("number"), "checks": checks})
        kept.append(attempt)
    doc = {**doc, "attempts": kept}
    if withdrawn:
        parts = dict(doc.get("parts") or {})
        held = parts.get(CiBatch.PART)
        part: dict[str, Any] = dict(held) if isinstance(held, dict) else \
            held.model_dump(exclude_unset=True) if isinstance(held, BaseModel) else {}
        part.setdefault("withdrawn", withdrawn)
        parts[CiBatch.PART] = part
        doc["parts"] = parts
    return doc


def ci(job: Job) -> CiJob:
    """The job's part of CI (empty until CI is first waited for)."""
    return job.part(CiJob)


def ci_batch(batch: Batch) -> CiBatch:
    """A batch's part of CI (per_batch)."""
    return batch.part(CiBatch)


def start_wait(job: Job, wait: CiWait) -> None:
    """The job waits for CI as `wait` says (counted: the metrics count the waits begun)."""
    part = ci(job)
    part.wait = wait
    part.waited = {**part.waited, wait.scope: part.waited.get(wait.scope, 0) + 1}


def results_of(job: Job, scope: str, number: int) -> list[CiResult]:
    """The CI results of one milestone (kept on the job) or one batch (kept on the batch)."""
    if scope == "batch":
        return ci_batch(job.batch(number)).results
    return [result for result in ci(job).results if result.number == number]


def waiting_for_ci(job: Job) -> bool:
    """Running and waiting for CI's verdict (no worker holds it)."""
    return job.waiting_outside and ci(job).wait is not None


def all_results(job: Job) -> list[CiResult]:
    """Every CI result of the job, milestone by milestone, each after its batches' own."""
    results: list[CiResult] = []
    for milestone in range(1, job.milestone_count + 1):
        results += [r for b in job.milestone_batches(milestone) for r in ci_batch(b).results]
        results += results_of(job, "milestone", milestone)
    return results


def ci_figures(job: Job) -> dict[str, float]:
    """The totals the metrics count (jobs/kernel/feature_parts.py `OUTSIDE_WAITS`,
    `OUTSIDE_VERDICTS`): the waits begun by scope, the verdicts by scope and outcome."""
    waits = {f"{OUTSIDE_WAITS}:{scope}": float(count) for scope, count in ci(job).waited.items()}
    results = all_results(job)
    return {**waits, **_verdict_totals([(r, r.state[:20]) for r in results]
                                       + [(r, "accepted") for r in results if r.accepted])}


def _verdict_totals(verdicts: list[tuple[CiResult, str]]) -> dict[str, float]:
    """How many of `verdicts` (a result and the outcome it counts as) fall under each name."""
    found: dict[str, float] = {}
    for result, outcome in verdicts:
        name = f"{OUTSIDE_VERDICTS}:{result.scope}:{outcome}"
        found[name] = found.get(name, 0.0) + 1.0
    return found


def ci_former_figures(job: Job, note: Mapping[str, Any]) -> dict[str, float]:
    """The verdicts the previous release's metrics had counted of `job`, from its note of what
    it saw: `ci_results` and `ci_accepted`, how many results of each list it had counted (the
    job's under "milestone", each batch's under its number) and how many of them accepted,
    counted as `ci_figures` counts them. No wait is among them: a record of that release reads
    into a part whose `waited` is empty, so the waits it counted are not counted again."""
    seen, accepted = note.get("ci_results") or {}, note.get("ci_accepted") or {}
    lists = {"milestone": ci(job).results,
             **{str(batch.number): ci_batch(batch).results for batch in job.batches}}
    counted: list[tuple[CiResult, str]] = []
    for key, results in lists.items():
        counted += [(r, r.state[:20]) for r in results[:int(seen.get(key, 0))]]
        counted += [(r, "accepted") for r in [r for r in results if r.accepted]
                    [:int(accepted.get(key, 0))]]
    return _verdict_totals(counted)


def withdrawn_checks(batch: Batch, attempt: int) -> list[CiCheck]:
    """The red checks that withdrew attempt `attempt`'s commit (none: it was not withdrawn)."""
    return [check for withdrawal in ci_batch(batch).withdrawn if withdrawal.attempt == attempt
            for check in withdrawal.checks]
