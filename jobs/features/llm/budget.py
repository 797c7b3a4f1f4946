"""The `budget` gate (pure): its row in the gate and pass tables, and its settling, an approval
granting one more token budget (the recipe counts the budget: jobs/recipes/llm/accounting.py)."""

from __future__ import annotations

from typing import Final

from jobs.features.llm.usage import usage
from jobs.kernel.feature_parts import GateRow
from jobs.kernel.gate_passes import PassRow, passed
from jobs.kernel.job import Job
from jobs.kernel.model import BatchStatus, GateRule, Verb

BUDGET: Final = "budget"  # the gate's kind, as records store it

BUDGET_GATE = GateRow(
    kind=BUDGET,
    rule=GateRule("the job spent its language-model token budget", Verb.APPROVE,
                  "grant one more budget", frozenset({Verb.APPROVE, Verb.SKIP}),
                  ("skip <reason>", "cancel"), 4),
    passing=PassRow(passed),  # the grant is counted when the batch runs again (settle below)
)


def settle_budget_gate(job: Job) -> None:
    """After a `budget` gate was answered: an approval (the batch not skipped) grants a budget."""
    number = usage(job).budget_gate_batch
    if number is None or job.gate is not None:
        return
    skipped = any(b.number == number and b.status is BatchStatus.SKIPPED for b in job.batches)
    if not skipped:
        usage(job).budget_grants += 1
    usage(job).budget_gate_batch = None
