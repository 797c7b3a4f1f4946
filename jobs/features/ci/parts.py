"""The CI feature's pure parts (installed by the composition roots): its part of the record
(record.py) and the fields it replaced, its gate `ci_failed` (when it opens, what it takes, what
passing it does), its section of the change note and its lines in the plan and the card."""

from __future__ import annotations

from jobs.features.ci.notes import (
    batch_ci_words,
    card_ci_lines,
    milestone_ci_lines,
    note_ci_lines,
    plan_ci_lines,
)
from jobs.features.ci.record import (
    AWAITING_CI,
    AWAITING_CI_ROW,
    FORMER_BATCH_FIELDS,
    FORMER_FIELDS,
    CiBatch,
    CiJob,
    ci,
    ci_figures,
    ci_former_figures,
    results_of,
    upgrade_batch,
)
from jobs.kernel.feature_parts import CardSection, FeatureParts, GateRow, NoteSection, NoteSlot
from jobs.kernel.gate_passes import PassRow
from jobs.kernel.job import Batch, Job, OpenGate
from jobs.kernel.model import BatchStatus, GateRule, Verb

CI_FAILED = "ci_failed"  # the gate's kind, as records store it


def passing(job: Job, _gate: OpenGate, verb: Verb, _batch: Batch | None) -> str:
    """`approve`: take the CI result as it is (the note names it); `retry`: re-run the failing
    checks and wait again. (`skip` of a batch went the shared way: the engine withdraws it.)"""
    part = ci(job)
    wait = part.wait
    if wait is None:
        return "gate ci_failed passed"
    what = f"milestone {wait.number}" if wait.scope == "milestone" else f"batch {wait.number}"
    if verb is Verb.RETRY:
        wait.rerun = True
        return f"re-running the failed checks of {what}, then waiting for CI again"
    for result in reversed(results_of(job, wait.scope, wait.number)):
        if result.sha == wait.sha:
            result.accepted = True
            break
    if wait.scope == "batch":
        waited = job.batch(wait.number)
        if waited.status == AWAITING_CI:
            waited.set_status(BatchStatus.COMPLETED)
    part.wait = None
    return f"the CI failure of {what} is accepted as it is (named in the note)"


GATE = GateRow(
    CI_FAILED,
    GateRule("a required check of the repository's CI failed or timed out", Verb.APPROVE,
             "accept the red CI result as it is (the note names it)",
             frozenset({Verb.APPROVE, Verb.RETRY, Verb.SKIP}),
             ("retry", "skip <reason>", "revert <batch>", "cancel"), 4),
    PassRow(passing))

PARTS = FeatureParts(
    name="ci",
    gates=(GATE,),
    batch_statuses=(AWAITING_CI_ROW,),  # per_batch: a pushed batch waiting for CI's verdict
    config_keys=("ci",),
    job_part=CiJob,
    batch_part=CiBatch,
    former_fields=FORMER_FIELDS,
    former_batch_fields=FORMER_BATCH_FIELDS,
    upgrade_batch=upgrade_batch,
    figures=ci_figures,  # the waits begun and the verdicts, which the metrics count
    former_figures=ci_former_figures,  # the verdicts the previous release's metrics counted
    note_sections=(NoteSection(NoteSlot.EVIDENCE, note_ci_lines),),
    card_sections=(CardSection(plan=plan_ci_lines, status=card_ci_lines, batch=batch_ci_words,
                               milestone=milestone_ci_lines),),
)
