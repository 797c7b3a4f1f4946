"""What people see of the repository's CI (pure): the plan's CI line, the card's CI state per
milestone and per batch, the `ci_failed` gate's report, and the change note's CI section.

The feature records what CI said in its part of the record (record.py: the wait while it waits;
once it decided, the job's results for a milestone's head and the batch's for a batch's commit);
everything here renders those records, so the card, `status`, the milestone report and the
note always agree.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from jobs.basics import markdown_safe as md
from jobs.basics.errors import ErrorInfo, RetryClass
from jobs.decisions.ci import CheckObservation, CiState, CiVerdict
from jobs.features.ci.record import AWAITING_CI, CiCheck, CiResult, CiWait, all_results, ci, results_of
from jobs.kernel.job import Batch, Job
from jobs.kernel.model import BatchStatus
from jobs.notes.annotations import Annotation
from jobs.notes.note_parts import short

LOG_TAIL_LINES = 30
ANNOTATIONS_SHOWN = 20
NOT_LOCAL = "CI is not used in local mode"


class FailureDetail(Protocol):
    """One failing check told in detail (jobs.ports.CiFailure is one)."""

    @property
    def check(self) -> str: ...
    @property
    def url(self) -> str: ...
    @property
    def annotations(self) -> tuple[Annotation, ...]: ...
    @property
    def log_tail(self) -> str: ...


def check_record(check: CheckObservation) -> CiCheck:
    return CiCheck(name=check.name, status=check.status, conclusion=check.conclusion,
                   url=check.url)


def checks_of(verdict: CiVerdict) -> list[CiCheck]:
    return [check_record(check) for check in verdict.checks]


def check_words(check: CiCheck) -> str:
    """"`tests` success (details: `url`)" — one check with its conclusion and its page (as
    code: a check's URL is the reporting app's to choose, and no message keeps a link)."""
    state = check.conclusion if check.status == "completed" else check.status
    link = f" (details: {md.code(check.url)})" if check.url else ""
    return f"{md.code(check.name)} {state or 'pending'}{link}"


def scope_words(scope: str, number: int) -> str:
    return f"milestone {number}" if scope == "milestone" else f"batch {number}"


def plan_ci_lines(job: Job) -> list[str]:
    """The plan's line on CI: what the job waits for (server mode), or that local mode has none."""
    ci = job.config.ci
    if not ci.waits:
        return ["- CI: not waited for (`ci.wait: off`)"]
    if job.server.installation_id is None:  # local mode: no forge with CI
        return [f"- {NOT_LOCAL} (`ci.wait: {ci.wait}` applies to server mode only); each batch "
                "is proven by the validation commands above"]
    which = ", ".join(f"`{name}`" for name in ci.checks) if ci.checks else \
        "the base branch's required checks (else every check on the commit)"
    where = "each milestone's head" if ci.wait == "per_milestone" else "each batch's commit"
    return [f"- CI: waits for {which} on {where} (`ci.wait: {ci.wait}`, timeout "
            f"{ci.timeout} min)"]


def latest_result(job: Job, scope: str, number: int) -> CiResult | None:
    results = results_of(job, scope, number)
    return results[-1] if results else None


def result_words(result: CiResult) -> str:
    verdict = {"passed": "passed", "failed": "failed", "timed_out": "timed out"}.get(
        result.state, result.state)
    accepted = " — accepted as is with {{approve}}" if result.accepted else ""
    checks = "; ".join(check_words(check) for check in result.checks) or "no checks reported"
    return f"CI on `{short(result.sha)}` {verdict}{accepted}: {checks}"


def waiting_line(wait: CiWait) -> str:
    """The current state while the job waits: "waiting for CI: 3 of 5 checks done"."""
    progress = wait.progress or "waiting for CI: no check has started yet"
    return f"Now {progress} on `{short(wait.sha)}` ({scope_words(wait.scope, wait.number)})."


def card_ci_lines(job: Job) -> list[str]:
    """The card's CI state, shown under the status line while the job waits for CI."""
    wait = ci(job).wait
    if wait is None or job.gate is not None:
        return []
    return ["", waiting_line(wait)]


def milestone_ci_lines(job: Job, milestone: int) -> list[str]:
    """A milestone's CI line in the card (and so in the milestone report): each check."""
    wait = ci(job).wait
    if wait is not None and wait.scope == "milestone" and wait.number == milestone and \
            job.gate is None:
        return [f"- CI: {wait.progress or 'waiting for CI'} on `{short(wait.sha)}`"]
    result = latest_result(job, "milestone", milestone)
    return [f"- {result_words(result)}"] if result is not None else []


def batch_ci_words(job: Job, batch: Batch) -> str:
    """" — CI passed" after a batch line, for `ci.wait: per_batch`."""
    wait = ci(job).wait
    if batch.status == AWAITING_CI and wait is not None and \
            wait.scope == "batch" and wait.number == batch.number:
        return f" — {wait.progress or 'waiting for CI'}"
    result = latest_result(job, "batch", batch.number)
    if result is None:
        return ""
    state = {"passed": "CI passed", "failed": "CI failed (withdrawn)",
             "timed_out": "CI timed out"}.get(result.state, result.state)
    return f" — {state}{' (accepted)' if result.accepted else ''}"


def batches_named(job: Job, annotations: Sequence[Annotation], *, milestone: int | None
                  ) -> list[int]:
    """The committed batches (of `milestone`, if given) whose files the annotations point at."""
    paths = {item.path for item in annotations}
    return [batch.number for batch in job.batches
            if (milestone is None or batch.milestone == milestone) and batch.commit
            and batch.status is not BatchStatus.REVERTED
            and paths & set(batch.changed_files or batch.files)]


def failure_report(job: Job, wait: CiWait, verdict: CiVerdict,
                   failures: Sequence[FailureDetail]) -> ErrorInfo:
    """The `ci_failed` gate's report: the failing checks, their annotations, the log tail of
    each failing job, and the batches whose files the annotations name. `failures` are
    `jobs.ports.CiFailure`s."""
    annotations = [a for f in failures for a in f.annotations]
    milestone = wait.number if wait.scope == "milestone" else None
    named = batches_named(job, annotations, milestone=milestone)
    what = scope_words(wait.scope, wait.number)
    timed = verdict.state is CiState.TIMED_OUT
    failing = ", ".join(f"{md.code(c.name)} (never reported)" if c.name in verdict.missing else
                        f"{md.code(c.name)} ({c.conclusion or c.status})"
                        for c in verdict.failing) or \
        ", ".join(f"{md.code(name)} (never reported)" for name in verdict.missing)
    message = (f"CI timed out on {what}'s head `{short(wait.sha)}` after "
               f"{job.config.ci.timeout} min: {failing} still pending" if timed else
               f"CI failed on {what}'s head `{short(wait.sha)}`: {failing}")
    lines = [message]
    lines += [f"- {md.code(f.check)}: details {md.code(f.url)}" for f in failures if f.url]
    if annotations:
        lines += ["", "Annotations:"]
        lines += [f"- {md.code(f'{a.path}:{a.line}')}: {md.code(a.message)}"
                  for a in annotations[:ANNOTATIONS_SHOWN]]
    if named:
        lines += ["", "They point at the files of " + ", ".join(f"batch {n}" for n in named)
                  + f" ({{{{revert {named[0]}}}}} undoes one)."]
    tails = [f"{f.check}:\n" + "\n".join(f.log_tail.rstrip().splitlines()[-LOG_TAIL_LINES:])
             for f in failures if f.log_tail]
    hint = ("{{approve}} accepts the red CI result as it is (the note names it), {{retry}} "
            "runs the failed checks again, {{revert <batch>}} undoes a batch and waits for CI "
            "again")
    return ErrorInfo(
        code="ci_timed_out" if timed else "ci_failed", retry_class=RetryClass.NEEDS_HUMAN,
        message="\n".join(lines), hint=hint,
        evidence={"output_tail": "\n\n".join(tails), "checks": [c.name for c in verdict.failing],
                  "batches": named, "sha": wait.sha,
                  "annotations": [f"{a.path}:{a.line}: {a.message}" for a in annotations[:50]]})


def attempt_failure(wait: CiWait, verdict: CiVerdict, failures: Sequence[FailureDetail]) -> ErrorInfo:
    """A per_batch candidate withdrawn for red checks: the attempt's error, which the next
    attempt is told (its message and output tail)."""
    names = md.codes(c.name for c in verdict.failing)
    annotations = [a for f in failures for a in f.annotations]
    found = "\n".join(f"{a.path}:{a.line}: {a.message}" for a in annotations[:ANNOTATIONS_SHOWN])
    tails = "\n\n".join(f"{f.check}:\n{f.log_tail}" for f in failures if f.log_tail)
    return ErrorInfo(
        code="ci_failed", retry_class=RetryClass.AUTO_RETRY,
        message=f"the repository's CI failed on the commit `{short(wait.sha)}`: {names}; the "
                "commit was withdrawn from the branch",
        hint="the next attempt must also pass these checks",
        evidence={"output_tail": "\n\n".join(part for part in (found, tails) if part)[-4000:],
                  "checks": [c.name for c in verdict.failing], "sha": wait.sha})


def note_ci_lines(job: Job) -> list[str]:
    """The change note's section on the repository's CI: every result, with links."""
    results = all_results(job)
    if not results:
        return []
    lines = ["", "## The repository's CI", ""]
    for result in results:
        lines.append(f"- {scope_words(result.scope, result.number).capitalize()}: "
                     f"{result_words(result)}")
    accepted = [r for r in results if r.accepted]
    if accepted:
        lines += ["", "Accepted although CI did not pass ({{approve}} at the `ci_failed` gate): "
                  + ", ".join(f"{scope_words(r.scope, r.number)} at `{short(r.sha)}`"
                              for r in accepted) + "."]
    return lines
