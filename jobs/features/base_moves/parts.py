"""The base_moves feature's pure parts: its part of the record (record.py) and the fields it
replaced, its merge commits, the `conflict` gate (when it opens, what it takes, what passing it
does), the `failure` gate's `base_merge` cause, the change note's "Base merges" section and the
card's closing lines, installed by the composition roots with the other features' parts
(jobs/composition.py)."""

from __future__ import annotations

from jobs.features.base_moves.record import FORMER_FIELDS, BaseMoves, merge_found, moves
from jobs.features.base_moves.texts import base_merge_card, base_merge_note
from jobs.kernel import trailers
from jobs.kernel.feature_parts import (
    CardSection,
    CommitKind,
    FailureRow,
    FeatureParts,
    GateRow,
    NoteSection,
    NoteSlot,
)
from jobs.kernel.gate_passes import PassRow, passed
from jobs.kernel.job import Batch, Job, OpenGate
from jobs.kernel.model import Acceptance, GateRule, Verb

CONFLICT = "conflict"  # the gate's kind, as records store it
BASE_MERGE = "base_merge"  # the `failure` gate's cause when merging the moved base failed


def _conflict(job: Job, _gate: OpenGate, _verb: Verb, _batch: Batch | None) -> str:
    job.accept(Acceptance.BRANCH_HEAD)  # the maintainer's merge commit is not someone else's work
    return "continuing on the branch as the maintainer resolved the conflict"


def _failed_base_merge(job: Job, gate: OpenGate, verb: Verb, batch: Batch | None) -> str:
    if verb is not Verb.APPROVE or gate.report is None:
        return passed(job, gate, verb, batch)  # `retry`: the merge is tried again
    moves(job).declined = str(gate.report.evidence.get("base_sha") or "") or None
    return "going on without merging the base (until it moves again)"


CONFLICT_GATE = GateRow(
    CONFLICT,
    GateRule("the base moved and the merge conflicts where no recipe can replay", Verb.APPROVE,
             "continue on the branch as a maintainer resolved it", frozenset({Verb.APPROVE}),
             ("cancel",), 4),
    PassRow(_conflict))

PARTS = FeatureParts(
    name="base_moves",
    gates=(CONFLICT_GATE,),
    # merging it failed validation or its replay failed: `approve` goes on without that base
    failure_causes=(FailureRow(BASE_MERGE, PassRow(
        _failed_base_merge, approve_means="go on without merging the base (until it moves again)")),),
    note_sections=(NoteSection(NoteSlot.AFTER_LEFT_OUT, base_merge_note),),
    card_sections=(CardSection(closing=base_merge_card),),
    job_part=BaseMoves,
    config_keys=("update_from_base",),
    former_fields=FORMER_FIELDS,
    # its merges of the base, found again on the branch by their trailer
    commits=(CommitKind(trailers.BASE_MERGE, lambda job: [m.commit for m in moves(job).merges],
                        merge_found, "base_merge"),),
)
