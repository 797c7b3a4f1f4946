"""The repository's CI as a verifier, decided from data (pure): which checks a commit needs,
what the check runs and commit statuses seen on it say, and whether a repository has CI at all.

Required checks are `ci.checks` when the config names them, else the base branch's required
status checks, else every check seen on the commit except Stepwise's own. With several runs of
one name (re-runs), the newest counts. The observations and the verdict are the forge's and the
batch hooks' data types (jobs/decisions/ci.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from jobs.decisions.ci import CheckObservation, CiState, CiVerdict, RequiredFrom

# Without a list of required checks, a commit on which no check appears within this grace is
# taken as a repository without CI, not as a check that never finishes.
NO_CHECKS_GRACE = timedelta(minutes=5)


def newest_per_name(observed: Sequence[CheckObservation]) -> dict[str, CheckObservation]:
    newest: dict[str, CheckObservation] = {}
    for check in observed:
        kept = newest.get(check.name)
        if kept is None or check.run_id >= kept.run_id:
            newest[check.name] = check
    return newest


@dataclass(frozen=True)
class CiRequirement:
    """Where the required names come from: the config, branch protection, or what is seen."""

    configured: tuple[str, ...] = ()
    protected: tuple[str, ...] = ()
    # Stepwise's own App id: its check runs are never CI. Told by the App's id alone, never by
    # a name or slug another App could give its own runs (a foreign failing run named
    # `Stepwise` is a foreign check like any other). 0: this forge has no App (nothing is own).
    own_app_id: int = 0

    def is_own(self, check: CheckObservation) -> bool:
        return bool(self.own_app_id) and check.app_id == self.own_app_id

    def foreign(self, observed: Sequence[CheckObservation]) -> list[CheckObservation]:
        return [check for check in observed if not self.is_own(check)]

    def names(self, observed: Sequence[CheckObservation]) -> tuple[list[str], RequiredFrom]:
        if self.configured:
            return list(self.configured), RequiredFrom.CONFIG
        if self.protected:
            return list(self.protected), RequiredFrom.PROTECTION
        return list(newest_per_name(self.foreign(observed))), RequiredFrom.OBSERVED


def ci_verdict(requirement: CiRequirement, observed: Sequence[CheckObservation], *,
               waiting_since: datetime, now: datetime, timeout: timedelta) -> CiVerdict:
    """The verdict on one commit: passed, failed, pending, or timed out past `timeout`."""
    observed = requirement.foreign(observed)  # our own runs never answer for a name
    names, source = requirement.names(observed)
    newest = newest_per_name(observed)
    checks = tuple(newest.get(name) or CheckObservation(name, "queued") for name in names)
    failing = tuple(check for check in checks if check.done and not check.passed)
    missing = tuple(name for name in names if name not in newest)
    waited = now - waiting_since
    if failing:
        return CiVerdict(CiState.FAILED, source, checks, failing, missing)
    if checks and all(check.passed for check in checks):
        return CiVerdict(CiState.PASSED, source, checks)
    if not checks and source is RequiredFrom.OBSERVED and waited >= min(NO_CHECKS_GRACE, timeout):
        return CiVerdict(CiState.PASSED, source)
    if waited >= timeout:
        late = tuple(check for check in checks if not check.done)
        return CiVerdict(CiState.TIMED_OUT, source, checks, late, missing)
    return CiVerdict(CiState.PENDING, source, checks, (), missing)


WORKFLOWS_DIR = ".github/workflows"


def expects_ci(requirement: CiRequirement, *, on_commit: Sequence[CheckObservation],
               on_base: Sequence[CheckObservation], workflow_files: Sequence[str]) -> bool:
    """Whether the repository has CI worth waiting for on a commit just pushed: named or
    required checks, a check already seen on it, GitHub Actions workflows in its tree, or checks
    from anyone but Stepwise on the base's head. A repository with none of these has no CI, and
    waiting for it would only cost NO_CHECKS_GRACE at every milestone."""
    if requirement.configured or requirement.protected:
        return True
    if any(name.endswith((".yml", ".yaml")) for name in workflow_files):
        return True
    return bool(requirement.names(on_commit)[0] or requirement.names(on_base)[0])
