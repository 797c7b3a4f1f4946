"""A toy feature (issue 29): this folder and one line in the features' tuple. It has

- a hook at the safe point: it counts the batches committed so far, and holds the job while its
  switch is on (the loop stops with the toy's own outcome and goes on once it is off);
- a gate of its own, `toy_check`, opened before each milestone ends until a person passed it for
  that milestone (its row: when it opens, what passes it, its exit code, what passing does);
- its part of the record (`job.parts["toy"]`: the milestones checked);
- a section of the change note ("## Toy checks");
- a hook at the job's end (`at_end`: the status the job ended with).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import BaseModel

from jobs.engine.context import Feature, JobContext, Outcome, outcome_of
from jobs.kernel.feature_parts import FeatureParts, GateRow, NoteSection, NoteSlot
from jobs.kernel.gate_passes import PassRow
from jobs.kernel.job import Batch, Job, OpenGate
from jobs.kernel.model import BatchStatus, GateRule, JobStatus, Verb

HELD = "held by the toy feature"
GATE = "toy_check"


class ToyRecord(BaseModel):
    """The toy's part of the job record."""

    checked: list[int] = []


def record_of(job: Job) -> ToyRecord:
    return ToyRecord.model_validate(job.parts.get("toy", {}))


def _checked(job: Job, gate: OpenGate, _verb: Verb, _batch: Batch | None) -> str:
    record = record_of(job)
    record.checked.append(gate.milestone or 0)
    job.parts["toy"] = record.model_dump()
    return f"toy check of milestone {gate.milestone} passed"


def _note(job: Job) -> list[str]:
    checked = record_of(job).checked
    if not checked:
        return []
    return ["", "## Toy checks", "", *[f"- milestone {m}: looked at by a person" for m in checked]]


PARTS = FeatureParts(
    name="toy",
    gates=(GateRow(GATE, GateRule("a milestone's batches are done and the toy wants a look",
                                  Verb.APPROVE, "let the milestone end", frozenset({Verb.APPROVE}),
                                  ("cancel",), 3),
                   PassRow(_checked)),),
    note_sections=(NoteSection(NoteSlot.EVIDENCE, _note),),
)


@dataclass
class Toy:
    hold: bool = False
    check_milestones: bool = False
    seen: list[int] = field(default_factory=list)  # batches committed at each safe point
    ended: list[str] = field(default_factory=list)  # the job's status at each `at_end`

    def at_safe_point(self, engine: JobContext) -> Outcome | bool | None:
        done = sum(batch.status is BatchStatus.COMPLETED for batch in engine.job.batches)
        self.seen.append(done)
        if self.hold:
            return Outcome(JobStatus.RUNNING, 0, HELD)
        return None

    def before_milestone_end(self, engine: JobContext, milestone: int) -> Outcome | None:
        if not self.check_milestones or milestone in record_of(engine.job).checked:
            return None
        engine.open(GATE, f"milestone {milestone}: the toy wants a look", milestone=milestone)
        return outcome_of(engine.job, voice=engine.services.voice)

    def at_end(self, engine: JobContext) -> None:
        self.ended.append(str(engine.job.status))

    def feature(self) -> Feature:
        return Feature(name="toy", safe_point=self.at_safe_point,
                       before_milestone_end=self.before_milestone_end, at_end=self.at_end,
                       parts=PARTS)
