"""The forge port: what the engine tells the outside world (local mode's side: adapters/local_forge.py)."""

from __future__ import annotations

from enum import StrEnum
from typing import Protocol

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
    CHECK_RUN = "check_run"  # a check run, found again by its external id (not posted yet)


class Forge(Protocol):
    def publish(self, job: Job, kind: Publication, text: str) -> None:
        """Show `text` to the people steering `job`. A forge that can fail keeps what it could
        not show in the job's outbox (jobs/domain/outbox.py) instead of raising."""
        ...

    def expect(self, job: Job, kind: Publication) -> None:
        """Record in `job`, before it is saved, that `kind` is owed (so a worker that dies
        before publishing leaves it owed, for the reconciler)."""
        ...
