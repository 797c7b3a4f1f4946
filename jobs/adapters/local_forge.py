"""The local forge: local mode's implementation of the forge port; everything goes to the CLI,
and there is no CI."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from jobs.decisions.ci import CheckObservation
from jobs.kernel.job import Job
from jobs.notes.check_runs import CheckRunDraft
from jobs.ports import CiFailure, CiReport, Publication, RerunRefused


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

    # Local mode has no CI (the plan says so): nothing to wait for, re-run or report on.
    def ci_report(self, job: Job, sha: str) -> CiReport | None:
        return None

    def ci_failures(self, job: Job, sha: str,
                    failing: Sequence[CheckObservation]) -> list[CiFailure]:
        return []

    def rerun_checks(self, job: Job, sha: str,
                     checks: Sequence[CheckObservation]) -> list[RerunRefused]:
        return []

    def publish_check_run(self, job: Job, draft: CheckRunDraft) -> None:
        return None
