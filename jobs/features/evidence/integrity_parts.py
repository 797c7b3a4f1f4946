"""The test-integrity guard's pure parts, the evidence's `tests` facet: its record (per batch, the
tests before and after, what weakened them, who accepted it), the gate `tests_weakened` (when it
opens, what it takes, what passing it does) and its words in the gate, the card, the check runs
and the change note's `## Evidence`. One vocabulary everywhere: "tests: 12 collected, 12 passed
→ 11 collected, 11 passed", "the tests check less", "accepted by <who>".
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from jobs.features.evidence.integrity_shapes import MAX_FINDINGS, Finding
from jobs.features.evidence.record import BatchEvidence, BatchTests, batch_evidence
from jobs.features.evidence.texts import FacetTexts
from jobs.kernel.feature_parts import GateRow
from jobs.kernel.gate_passes import PassRow
from jobs.kernel.job import Batch, Job, OpenGate
from jobs.kernel.model import GateRule, Verb

TESTS_WEAKENED: Final = "tests_weakened"  # the gate's kind, as records store it
FACET: Final = "tests"  # the facet's name (its record: `BatchEvidence.tests`)
FINDINGS_KEPT = 20  # per batch in the record; the rest are counted
GATE_HEAD = "the tests check less after this batch ({count}):"
FOR_MODEL = ("you weakened {tests}: restore {them} and fix the code instead (Stepwise stops a "
             "batch that makes the tests check less at the `tests_weakened` gate)")


def batch_tests(batch: Batch) -> BatchTests | None:
    return batch_evidence(batch).tests


def put_batch_tests(batch: Batch, tests: BatchTests) -> None:
    batch.part(BatchEvidence).tests = tests


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def run_words(tests: BatchTests) -> str:
    """"tests: 12 collected, 12 passed → 11 collected, 11 passed"."""
    return f"tests: {tests.before} → {tests.after}"


def gate_reason(findings: Sequence[Finding]) -> str:
    shown = [f"- {finding.line()}" for finding in findings[:MAX_FINDINGS]]
    if len(findings) > MAX_FINDINGS:
        shown.append(f"- … and {len(findings) - MAX_FINDINGS} more")
    return "\n".join([GATE_HEAD.format(count=plural(len(findings), "finding")), *shown])


def model_feedback(findings: Sequence[Finding]) -> str:
    """What the model is told of its weakening, once, as the reason its attempt failed."""
    tests = sorted({f.test for f in findings})
    named = ", ".join(f"`{t}`" for t in tests[:5]) + (f" and {len(tests) - 5} more"
                                                      if len(tests) > 5 else "")
    head = FOR_MODEL.format(tests=f"test {named}" if len(tests) == 1 else f"tests {named}",
                            them="it" if len(tests) == 1 else "them")
    return head + ":\n" + "\n".join(f"- {f.line()}" for f in findings[:MAX_FINDINGS])


def passing(job: Job, gate: OpenGate, verb: Verb, batch: Batch | None) -> str:
    """`approve`: commit the batch as it is, named in the note with who accepted it; `retry`:
    run the batch again. (`skip` went the shared way.)"""
    if batch is None:
        return f"gate {gate.kind} passed"
    if verb is not Verb.APPROVE:
        return f"batch {batch.number} will be retried"
    batch.approved_gates.append(TESTS_WEAKENED)
    tests = batch_tests(batch) or BatchTests()
    tests.accepted_by = gate.answered_by or "someone who may steer the job"
    tests.accepted = list(tests.findings)
    put_batch_tests(batch, tests)
    return (f"batch {batch.number}: the weakened tests are accepted by {tests.accepted_by} "
            "(named in the change note); the batch is committed once it validates again")


GATE = GateRow(
    TESTS_WEAKENED,
    GateRule("the batch makes the tests check less (removed, skipped or deselected tests, "
             "removed or loosened assertions, changed expected values)", Verb.APPROVE,
             "commit the batch with its weakened tests (named in the note)",
             frozenset({Verb.APPROVE, Verb.RETRY, Verb.SKIP}),
             ("retry", "skip <reason>", "cancel"), 4, lets_batch_through=True),
    PassRow(passing))


def batch_lines(_job: Job, batch: Batch) -> list[str]:
    """The batch's tests before → after, and what weakened them: accepted (with who and each
    finding, once committed), or waiting at the gate."""
    tests = batch_tests(batch)
    if tests is None:
        return []
    if tests.accepted_by and batch.commit is not None:
        more = [f"… and {tests.more} more accepted"] if tests.more else []
        return [f"{run_words(tests)}; the tests check less, accepted by {tests.accepted_by}:",
                *(f"accepted: {item}" for item in tests.accepted), *more]
    if tests.findings and batch.commit is None:
        count = plural(len(tests.findings) + tests.more, "finding")
        return [f"{run_words(tests)}; the tests check less ({count})"]
    return [f"{run_words(tests)}; nothing weakened"]


def card_words(_job: Job, batch: Batch) -> str:
    """"tests weakened, accepted by @alice" on a committed batch's card line."""
    tests = batch_tests(batch)
    if tests is None or not tests.accepted_by or batch.commit is None:
        return ""
    return f"tests weakened, accepted by {tests.accepted_by}"


def holds(job: Job, batch: Batch) -> str:
    """Why the batch needs a person before its milestone may pass on its own
    (`gates.auto_approve_known_shapes`): it made the tests check less, even if someone accepted
    that at its `tests_weakened` gate (a milestone that weakens tests is never passed unseen)."""
    tests = batch_tests(batch)
    if tests is not None and (tests.findings or tests.accepted):
        return "it made the tests check less"
    return ""


TEXTS = FacetTexts(name=FACET, batch=batch_lines, words=card_words, gates=(GATE,), holds=holds)
