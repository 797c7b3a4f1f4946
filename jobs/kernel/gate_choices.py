"""What a gate prompt recommends (pure): the answer that can work and the other choices, from the
gate table (jobs/kernel/model.py) and what the gate is about.

Each verb keeps one meaning. At `failure`, `approve` still retries the batch (DESIGN's table) but
is not offered as a choice of its own beside `retry`; where it means something else (finish
despite a failed final review, go on without merging the base: the failure cause's row in
jobs/kernel/gate_passes.py, or a feature's, says so) it is the recommended answer. A
batch of a deterministic recipe (`replace`, `command`) that failed validation would fail the same
way again, so the prompt recommends `skip`, a revert or a spec fix, never a retry.
"""

from __future__ import annotations

from dataclasses import dataclass

from jobs.basics.errors import RetryClass
from jobs.basics.voice import Voice
from jobs.inputs.spec import Recipe
from jobs.kernel.gate_passes import failure_row
from jobs.kernel.job import Job, OpenGate
from jobs.kernel.model import GATES, Gate

DETERMINISTIC_RECIPES = frozenset({Recipe.REPLACE, Recipe.COMMAND})


@dataclass(frozen=True)
class Choices:
    """The recommended answer (a usage line and what it does), the others, and a sentence on
    why a retry is not offered (empty when it is)."""

    usage: str
    meaning: str
    others: tuple[str, ...]
    why: str = ""

    def lines(self, voice: Voice) -> list[str]:
        """The prompt's closing paragraphs, each command written in `voice`."""
        paragraphs = [f"To {self.meaning}: {voice.usage(self.usage)}"]
        if self.why:
            paragraphs.append(voice.speak(self.why))
        if self.others:
            paragraphs.append("Other choices: " + ", ".join(voice.usage(u) for u in self.others))
        return paragraphs


def repeats_itself(job: Job, gate: OpenGate) -> bool:
    """A retry of this failed batch would make the same edit and fail the same way."""
    report = gate.report
    return (gate.kind is Gate.FAILURE and gate.batch is not None
            and job.spec.recipe in DETERMINISTIC_RECIPES
            and (report is None or report.retry_class is not RetryClass.AUTO_RETRY))


def gate_choices(job: Job, gate: OpenGate) -> Choices:
    rule = GATES[gate.kind]
    if gate.kind is not Gate.FAILURE:
        return Choices(rule.verb, rule.meaning, rule.other_choices)
    approve_means = failure_row(gate).approve_means  # the cause's own meaning of `approve`
    if approve_means:
        return Choices("approve", approve_means, ("retry", "cancel"))
    if repeats_itself(job, gate):
        return Choices(
            "skip <reason>", f"leave batch {gate.batch} out, with the reason", (
                "revert <batch>", "cancel"),
            why=f"A retry would make the same edit and fail the same way (the `{job.spec.recipe}`"
                " recipe is deterministic). To change what the batch does, fix the spec in the "
                "issue (the job re-plans); if an earlier batch broke this one, "
                "{{revert <batch>}} undoes it.")
    return Choices("retry", rule.meaning, ("skip <reason>", "cancel"))
