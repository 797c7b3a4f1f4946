"""A small in-memory forge for unit tests: implements jobs.ports.Forge, logs every effect in
order, and fails on demand (like Prow's fake GitHub client), so a test asserts what the engine
told the outside world without a server. Its CI is scripted: a test reports checks on a commit
(`report_check`) as the repository's CI would, and reads what the engine re-ran and which check
runs it published."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from jobs.decisions.ci import CheckObservation
from jobs.kernel.job import Job
from jobs.notes.check_runs import CheckRunDraft
from jobs.ports import CiFailure, CiReport, Publication, RerunRefused


@dataclass(frozen=True)
class Effect:
    """One call the engine made: `expect` (a publication is owed) or `publish`."""

    action: str
    kind: Publication
    job_id: str
    text: str = ""


@dataclass
class InMemoryForge:
    effects: list[Effect] = field(default_factory=list)
    _failures: dict[Publication, list[Exception]] = field(default_factory=dict)
    has_ci: bool = True  # False: like local mode, `ci_report` says there is no CI
    checks: dict[str, list[CheckObservation]] = field(default_factory=dict)  # by commit sha
    protected: tuple[str, ...] = ()  # the base branch's required checks
    failure_details: dict[str, CiFailure] = field(default_factory=dict)  # by check name
    reruns: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)  # (sha, names)
    rerun_refused: set[str] = field(default_factory=set)  # check names it cannot re-run
    check_runs: dict[str, CheckRunDraft] = field(default_factory=dict)  # by external id

    def fail_next(self, kind: Publication, error: Exception, *, times: int = 1) -> None:
        """The next `times` publications of `kind` raise `error` (and are not logged)."""
        self._failures.setdefault(kind, []).extend([error] * times)

    def publish(self, job: Job, kind: Publication, text: str) -> None:
        pending = self._failures.get(kind)
        if pending:
            raise pending.pop(0)
        self.effects.append(Effect("publish", kind, job.id, text))

    def expect(self, job: Job, kind: Publication) -> None:
        self.effects.append(Effect("expect", kind, job.id))

    def published(self, kind: Publication | None = None) -> list[str]:
        """The texts published, in order (of one kind, or all)."""
        return [e.text for e in self.effects
                if e.action == "publish" and (kind is None or e.kind is kind)]

    def actions(self) -> list[str]:
        """"expect:gate", "publish:gate", ...: the order of what was done."""
        return [f"{e.action}:{e.kind}" for e in self.effects]

    # -- the scripted CI ---------------------------------------------------------------------
    def report_check(self, sha: str, name: str, status: str = "completed",
                     conclusion: str | None = "success", *, url: str = "") -> None:
        """The repository's CI reports `name` on `sha` (a later report is a newer run)."""
        runs = self.checks.setdefault(sha, [])
        runs.append(CheckObservation(name, status, conclusion, url or f"https://ci.example/{name}",
                                     app_slug="github-actions", run_id=len(runs) + 1))

    def ci_report(self, job: Job, sha: str) -> CiReport | None:
        if not self.has_ci:
            return None
        return CiReport(tuple(self.checks.get(sha, ())), self.protected)

    def ci_failures(self, job: Job, sha: str,
                    failing: Sequence[CheckObservation]) -> list[CiFailure]:
        return [self.failure_details.get(check.name)
                or CiFailure(check.name, check.conclusion or "failure", check.url)
                for check in failing]

    def rerun_checks(self, job: Job, sha: str,
                     checks: Sequence[CheckObservation]) -> list[RerunRefused]:
        self.reruns.append((sha, tuple(check.name for check in checks)))
        return [RerunRefused(c, f"re-run `{c.name}` by hand") for c in checks
                if c.name in self.rerun_refused]

    def publish_check_run(self, job: Job, draft: CheckRunDraft) -> None:
        self.check_runs[draft.external_id] = draft
