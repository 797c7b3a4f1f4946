"""The local forge: local mode's implementation of the forge port; everything goes to the CLI."""

from __future__ import annotations

from collections.abc import Callable

from jobs.domain.model import Job
from jobs.ports import Publication


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
