"""The llm feature's part of the job record (pure): `Job.parts["llm"]`, the job's model spending
and the `budget` gate's bookkeeping: each model call is counted here (`record_usage`), the
budget gate, the plan and the note read it, and others read its totals as figures
(`MODEL_TOKENS_IN`, `MODEL_TOKENS_OUT`, jobs/kernel/feature_parts.py), never this model.
Records of earlier releases kept it as the job's field `llm`; `FORMER_FIELDS` reads that into
the part."""

from __future__ import annotations

from typing import ClassVar

from jobs.kernel.feature_parts import MODEL_TOKENS_IN, MODEL_TOKENS_OUT
from jobs.kernel.job import Job
from jobs.kernel.record_parts import RecordPart
from jobs.kernel.records import ModelCall


class LlmUsage(RecordPart):
    """The job's language-model spending, and the `budget` gate's bookkeeping."""

    PART: ClassVar[str] = "llm"

    tokens_in: int = 0
    tokens_out: int = 0
    calls: int = 0
    budget_grants: int = 0  # each approval of the `budget` gate grants one more budget
    budget_gate_batch: int | None = None  # the batch a `budget` gate was opened for, until settled
    edit_format: str = ""  # how the model edits, as planned (the plan says it; "" without a model)

    @property
    def tokens(self) -> int:
        return self.tokens_in + self.tokens_out


FORMER_FIELDS = {"llm": ""}  # the whole former field is the part


def usage(job: Job) -> LlmUsage:
    """The job's model usage (empty until a model is asked)."""
    return job.part(LlmUsage)


def usage_figures(job: Job) -> dict[str, float]:
    """The totals other features and the metrics read (by figure name, not by this model)."""
    spent = usage(job)
    return {MODEL_TOKENS_IN: spent.tokens_in, MODEL_TOKENS_OUT: spent.tokens_out}


def record_usage(job: Job, call: ModelCall) -> None:
    """Count a call against the job (kept in the record even if the batch is later re-planned)."""
    spent = usage(job)
    spent.calls += 1
    spent.tokens_in += call.tokens_in
    spent.tokens_out += call.tokens_out
