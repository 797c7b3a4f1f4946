"""The forge port: what the engine tells the outside world and what it asks of the repository's
CI (local mode's side: adapters/local_forge.py; server mode's: bot/github/forge.py)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol

from jobs.domain.annotations import Annotation
from jobs.domain.check_runs import CheckRunDraft
from jobs.domain.ci import CheckObservation
from jobs.domain.model import Job


class Publication(StrEnum):
    """Kinds of message; on GitHub each maps to a comment or to the PR body (the progress card)."""

    PLAN = "plan"
    PROGRESS = "progress"
    GATE = "gate"
    MILESTONE_REPORT = "milestone_report"
    SUMMARY = "summary"
    RESUMED = "resumed"  # after an interruption: where the job picks up
    NOTICE = "notice"
    CHECK_RUN = "check_run"  # a check run, found again by its external id


@dataclass(frozen=True)
class CiReport:
    """What the forge knows of one commit's CI: every check run and commit status seen on it
    (`jobs.domain.ci.CheckObservation`s), and the base branch's required status checks (branch
    protection and rulesets together; empty when the base requires none)."""

    observed: tuple[CheckObservation, ...] = ()
    protected: tuple[str, ...] = ()
    strict: bool = False  # the base's protection requires branches to be up to date


@dataclass(frozen=True)
class CiFailure:
    """One failing check, told well enough to act on: its annotations (repository paths and
    lines), the tail of the failing Actions job's log (empty when it is no Actions job or the
    log is gone), and its link."""

    check: str
    conclusion: str
    url: str = ""
    annotations: tuple[Annotation, ...] = field(default=())
    log_tail: str = ""


class Forge(Protocol):
    def publish(self, job: Job, kind: Publication, text: str) -> None:
        """Show `text` to the people steering `job`. A forge that can fail keeps what it could
        not show in the job's outbox (jobs/domain/outbox.py) instead of raising."""
        ...

    def expect(self, job: Job, kind: Publication) -> None:
        """Record in `job`, before it is saved, that `kind` is owed (so a worker that dies
        before publishing leaves it owed, for the reconciler)."""
        ...

    def ci_report(self, job: Job, sha: str) -> CiReport | None:
        """The checks and statuses on `sha` now, and what the base branch requires; None when
        this forge has no CI (local mode). A fault raises a retryable StepwiseError."""
        ...

    def ci_failures(self, job: Job, sha: str,
                    failing: Sequence[CheckObservation]) -> list[CiFailure]:
        """Annotations and log tails of the `failing` checks on `sha` (best effort: a detail
        GitHub cannot give is left empty, never an error)."""
        ...

    def rerun_checks(self, job: Job, sha: str, checks: Sequence[CheckObservation]) -> None:
        """Ask CI to run the `checks` on `sha` again (Actions: re-run the failed jobs; other
        apps: re-request the check run). A check that cannot be re-run is left as it is."""
        ...

    def publish_check_run(self, job: Job, draft: CheckRunDraft) -> None:
        """Create or update Stepwise's own check run `draft` (found again by its external id,
        so repeating it never makes a second run). Owed in the outbox under
        `check:<external id>` until GitHub confirms it; local mode ignores it."""
        ...
