"""The `budget` gate as the llm feature's row: its kind and texts as before, and its settling."""

from __future__ import annotations

from datetime import UTC, datetime

from jobs.features.llm.budget import BUDGET, settle_budget_gate
from jobs.features.llm.usage import usage
from jobs.kernel.gates import open_gate
from jobs.kernel.model import GATES, BatchStatus, JobStatus
from jobs.recipes.llm.accounting import allowance
from tests.kit.records import make_batch, make_job

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def test_settle_grants_a_budget_only_for_an_approved_gate() -> None:
    assert allowance(1000, 0) == 1000 and allowance(1000, 2) == 3000
    job = make_job(batches=[make_batch(1), make_batch(2, status=BatchStatus.SKIPPED)])
    usage(job).budget_gate_batch = 1
    settle_budget_gate(job)
    assert (usage(job).budget_grants, usage(job).budget_gate_batch) == (1, None)
    settle_budget_gate(job)  # settled once only
    assert usage(job).budget_grants == 1
    usage(job).budget_gate_batch = 2  # skipped at the gate: no grant
    settle_budget_gate(job)
    assert (usage(job).budget_grants, usage(job).budget_gate_batch) == (1, None)


def test_the_budget_gate_keeps_its_stored_kind_and_its_words() -> None:
    rule = GATES[BUDGET]
    assert BUDGET == "budget"
    assert (rule.opened_when, rule.meaning, rule.other_choices, rule.exit_code) == (
        "the job spent its language-model token budget", "grant one more budget",
        ("skip <reason>", "cancel"), 4)


def test_a_record_stopped_at_the_budget_gate_reads_back() -> None:
    job = make_job(status=JobStatus.RUNNING, batches=[make_batch(1)])
    open_gate(job, BUDGET, reason="the job has spent 700 tokens", now=T0, batch=1)
    stored = job.model_dump_json()
    assert '"kind":"budget"' in stored
    again = type(job).model_validate_json(stored)
    assert again.gate is not None and again.gate.kind == "budget" and again.gate.exit_code == 4
