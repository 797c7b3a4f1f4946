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


class Forge(Protocol):
    def publish(self, job: Job, kind: Publication, text: str) -> None:
        """Show `text` to the people steering `job`."""
        ...
