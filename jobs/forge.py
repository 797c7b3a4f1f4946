"""The forge port: what the engine tells the outside world, and the local implementation of it."""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import Protocol

from jobs.model import Job


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
        not show in the job's outbox (jobs/outbox.py) instead of raising."""
        ...

    def expect(self, job: Job, kind: Publication) -> None:
        """Record in `job`, before it is saved, that `kind` is owed (so a worker that dies
        before publishing leaves it owed, for the reconciler)."""
        ...


class LocalForge:
    """Local mode: everything goes to a callback (the CLI prints it); nothing leaves the machine."""

    def __init__(self, sink: Callable[[Publication, str], None]) -> None:
        self.sink = sink
        self.log: list[tuple[Publication, str]] = []

    def publish(self, job: Job, kind: Publication, text: str) -> None:
        self.log.append((kind, text))
        self.sink(kind, text)

    def expect(self, job: Job, kind: Publication) -> None:
        return None  # printing cannot fail: nothing is owed
