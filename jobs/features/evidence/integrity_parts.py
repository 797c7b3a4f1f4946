"""The test-integrity guard's pure parts: its record part (per batch, the tests before and after
and what weakened them, who accepted it), the gate `tests_weakened` (when it opens, what it takes,
what passing it does), the words of the gate, the card and the change note's `## Evidence`
lines. One vocabulary everywhere: "tests: 12 collected, 12 passed → 11 collected, 11 passed",
"the tests check less after this batch", "accepted by <who>".
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from pydantic import Field

from jobs.basics import markdown_safe as md
from jobs.features.evidence.integrity_shapes import MAX_FINDINGS, Finding
from jobs.kernel.feature_parts import CardSection, FeatureParts, GateRow, NoteSection, NoteSlot
from jobs.kernel.gate_passes import PassRow
from jobs.kernel.job import Batch, Job, OpenGate
from jobs.kernel.model import GateRule, Verb
from jobs.kernel.records import Record

TESTS_WEAKENED: Final = "tests_weakened"  # the gate's kind, as records store it
PART: Final = "tests_integrity"  # the record part's name (Job.parts)
FINDINGS_KEPT = 20  # per batch in the record; the rest are counted
GATE_HEAD = "the tests check less after this batch ({count}):"
FOR_MODEL = ("you weakened {tests}: restore {them} and fix the code instead (Stepwise stops a "
             "batch that makes the tests check less at the `tests_weakened` gate)")


class BatchTests(Record):
    """One batch's tests before and after, and what made them check less."""

    before: str = ""  # "12 collected, 12 passed" or "not measured (why)"
    after: str = ""
    findings: list[str] = Field(default_factory=list)  # Finding.line(), at most FINDINGS_KEPT
    more: int = 0  # findings left out of `findings`
    told_model: bool = False  # recipe llm: the finding went back to the model once
    accepted_by: str = ""  # who passed the gate with `approve`
    accepted: list[str] = Field(default_factory=list)  # what they accepted


class IntegrityPart(Record):
    batches: dict[str, BatchTests] = Field(default_factory=dict)


def read_part(job: Job) -> IntegrityPart:
    return IntegrityPart.model_validate(job.parts.get(PART, {}))


def batch_tests(job: Job, number: int) -> BatchTests | None:
    return read_part(job).batches.get(str(number))


def write_batch(job: Job, number: int, tests: BatchTests) -> None:
    part = read_part(job)
    part.batches[str(number)] = tests
    job.parts[PART] = part.model_dump(mode="json")


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def run_words(tests: BatchTests) -> str:
    """"tests: 12 collected, 12 passed → 11 collected, 11 passed" (each side may be
    "not measured (why)")."""
    return f"tests: {tests.before or 'not measured'} → {tests.after or 'not measured'}"


def gate_reason(findings: Sequence[Finding], tests: BatchTests) -> str:
    shown = [f"- {finding.line()}" for finding in findings[:MAX_FINDINGS]]
    if len(findings) > MAX_FINDINGS:
        shown.append(f"- … and {len(findings) - MAX_FINDINGS} more")
    return "\n".join([GATE_HEAD.format(count=plural(len(findings), "finding")), *shown,
                      run_words(tests)])


def model_feedback(findings: Sequence[Finding]) -> str:
    tests = sorted({f.test for f in findings})
    named = ", ".join(f"`{t}`" for t in tests[:5]) + (f" and {len(tests) - 5} more"
                                                      if len(tests) > 5 else "")
    head = FOR_MODEL.format(tests=f"test {named}" if len(tests) == 1 else f"tests {named}",
                            them="it" if len(tests) == 1 else "them")
    return head + ":\n" + "\n".join(f"- {f.line()}" for f in findings[:MAX_FINDINGS])


def passing(job: Job, gate: OpenGate, verb: Verb, batch: Batch | None) -> str:
    """`approve`: commit the batch as it is, named in the note with who accepted it; `retry`:
    run the batch again (recipe llm: the model is told again). `skip` went the shared way."""
    if batch is None:
        return f"gate {gate.kind} passed"
    if verb is not Verb.APPROVE:
        return f"batch {batch.number} will be retried"
    batch.approved_gates.append(TESTS_WEAKENED)
    tests = batch_tests(job, batch.number) or BatchTests()
    tests.accepted_by = gate.answered_by or "someone who may steer the job"
    tests.accepted = list(tests.findings)
    write_batch(job, batch.number, tests)
    return (f"batch {batch.number}: the weakened tests are accepted by {tests.accepted_by} "
            "(named in the change note); the batch is committed when it validates again")


GATE = GateRow(
    TESTS_WEAKENED,
    GateRule("the batch makes the tests check less (removed, skipped or deselected tests, "
             "removed or loosened assertions, changed expected values)", Verb.APPROVE,
             "commit the batch with its weakened tests (named in the note)",
             frozenset({Verb.APPROVE, Verb.RETRY, Verb.SKIP}),
             ("retry", "skip <reason>", "cancel"), 4, lets_batch_through=True),
    PassRow(passing))


def batch_words(job: Job, batch: Batch) -> str:
    """" — tests weakened, accepted by @alice" after a batch's card line."""
    tests = batch_tests(job, batch.number)
    if tests is None or not tests.accepted_by or batch.commit is None:
        return ""
    return f" — tests weakened, accepted by {md.text(tests.accepted_by)}"


def note_lines(job: Job) -> list[str]:
    """The change note's `## Evidence` lines on the tests: per committed batch, before → after,
    and each accepted weakening with who accepted it."""
    lines: list[str] = []
    for batch in job.batches:
        tests = batch_tests(job, batch.number)
        if tests is None or batch.commit is None:
            continue
        accepted = f"; the tests check less, accepted by {md.text(tests.accepted_by)}:" \
            if tests.accepted_by else "; nothing weakened"
        lines.append(f"- batch {batch.number}: {md.message(run_words(tests))}{accepted}")
        lines += [f"  - {md.message(item)}" for item in tests.accepted]
        if tests.accepted_by and tests.more:
            lines.append(f"  - … and {tests.more} more")
    if not lines:
        return []
    return ["", "## Evidence", "", "Tests checked before and after each batch (the runner's "
            "report; the test files read for removed, skipped or loosened tests):", "", *lines]


PARTS = FeatureParts(
    name="tests_integrity",
    gates=(GATE,),
    note_sections=(NoteSection(NoteSlot.EVIDENCE, note_lines),),
    card_sections=(CardSection(batch=batch_words),),
)
