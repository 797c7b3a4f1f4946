"""What the repository's CI said, as data: the check runs and commit statuses seen on a commit
(`CheckObservation`, what the forge port reports) and the verdict on them (`CiVerdict`, what the
batch hooks are told). A check is done when it completed (a commit status: when it left
`pending`); it passes with `success`, `neutral` or `skipped`. The rules that decide the verdict
are the CI feature's (jobs/features/ci/rules.py); these types stay here because the forge port
(jobs/ports.py) and the engine's batch hooks name them.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

PASSING = frozenset({"success", "neutral", "skipped"})


class CiState(StrEnum):
    PENDING = "pending"
    PASSED = "passed"
    FAILED = "failed"
    TIMED_OUT = "timed_out"


class RequiredFrom(StrEnum):
    CONFIG = "ci.checks"
    PROTECTION = "the base branch's required checks"
    OBSERVED = "every check on the commit"


@dataclass(frozen=True)
class CheckObservation:
    """One check run, or one commit status (its context as the name), on one commit."""

    name: str
    status: str  # queued | in_progress | completed
    conclusion: str | None = None  # success | failure | neutral | cancelled | skipped | ...
    url: str = ""
    app_slug: str = ""  # "" for a commit status
    run_id: int = 0  # orders re-runs of one name; 0 for commit statuses
    app_id: int = 0  # the check run's `app.id`; 0 for a commit status

    @property
    def done(self) -> bool:
        return self.status == "completed"

    @property
    def passed(self) -> bool:
        return self.done and self.conclusion in PASSING


def from_commit_status(context: str, state: str, url: str = "") -> CheckObservation:
    """A commit status (`pending`, `success`, `failure`, `error`) as a check."""
    if state == "pending":
        return CheckObservation(context, "in_progress", None, url)
    return CheckObservation(context, "completed", "success" if state == "success" else "failure",
                            url)


@dataclass(frozen=True)
class CiVerdict:
    """What the required checks of one commit say now."""

    state: CiState
    required_from: RequiredFrom
    checks: tuple[CheckObservation, ...] = ()  # one per required name; missing ones queued
    failing: tuple[CheckObservation, ...] = ()
    missing: tuple[str, ...] = ()

    @property
    def done(self) -> int:
        return sum(1 for check in self.checks if check.done)

    @property
    def total(self) -> int:
        return len(self.checks)

    def progress(self) -> str:
        """The line the card, `status` and the task center show."""
        if self.state is CiState.PENDING:
            if not self.checks:
                return "waiting for CI: no check has started yet"
            noun = "check" if self.total == 1 else "checks"
            return f"waiting for CI: {self.done} of {self.total} {noun} done"
        if self.state is CiState.PASSED:
            return f"CI passed ({self.total} {'check' if self.total == 1 else 'checks'})" \
                if self.checks else "CI: no checks reported on this commit"
        names = ", ".join(f"`{check.name}`" for check in self.failing) or \
            ", ".join(f"`{name}`" for name in self.missing)
        if self.state is CiState.TIMED_OUT:
            return f"CI timed out waiting for {names}"
        return f"CI failed: {names}"
