"""A toy feature (issue 29): one folder and one line in the wiring's tuple. At every safe point
it counts the batches committed so far, and holds the job while its switch is on: the loop stops
with the toy's own outcome and goes on where it stood once the switch is off."""

from __future__ import annotations

from dataclasses import dataclass, field

from jobs.domain.model import BatchStatus, JobStatus
from jobs.engine.context import JobContext, Outcome

HELD = "held by the toy feature"


@dataclass
class Toy:
    hold: bool = False
    seen: list[int] = field(default_factory=list)  # batches committed at each safe point

    def at_safe_point(self, engine: JobContext) -> Outcome | bool | None:
        done = sum(batch.status is BatchStatus.COMPLETED for batch in engine.job.batches)
        self.seen.append(done)
        if self.hold:
            return Outcome(JobStatus.RUNNING, 0, HELD)
        return None
