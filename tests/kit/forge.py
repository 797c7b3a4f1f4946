"""A small in-memory forge for unit tests: implements jobs.ports.Forge, logs every effect in
order, and fails on demand (like Prow's fake GitHub client), so a test asserts what the engine
told the outside world without a server."""

from __future__ import annotations

from dataclasses import dataclass, field

from jobs.domain.model import Job
from jobs.ports import Publication


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
