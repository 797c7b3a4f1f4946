"""What the coverage facet says (pure), the same words in the gate, the card, the check runs and
the note: "changed lines run by the tests: 42 of 45 (93%)", the changed lines the tests did not
run as `path:line` (the first few, then how many more), "coverage: not measured (why)"; and its
gate `uncovered_change`."""

from __future__ import annotations

from jobs.features.evidence.coverage_record import FACET, CoverageRecord, nothing_to_measure
from jobs.features.evidence.record import batch_evidence
from jobs.features.evidence.texts import FacetTexts, listed, share
from jobs.kernel.feature_parts import GateRow, LineMark
from jobs.kernel.gate_passes import PassRow
from jobs.kernel.job import Batch, Job, OpenGate
from jobs.kernel.model import BatchStatus, GateRule, Verb

UNCOVERED_CHANGE = "uncovered_change"  # the gate's kind, as records store it
RUN = "changed lines run by the tests"
NOT_RUN = "changed lines the tests did not run"
NOT_MEASURED = "coverage: not measured"
NO_LINES = "no executable line changed"
ANNOTATION_TITLE = "changed line not run by the tests"


def record_of(batch: Batch) -> CoverageRecord | None:
    return batch_evidence(batch).coverage


def below(job: Job, record: CoverageRecord) -> bool:
    """Whether `record` is under the config's `evidence.min_changed_coverage` (unset: never)."""
    floor = job.config.evidence.min_changed_coverage
    return floor is not None and record.measured and record.total > 0 and \
        record.run * 100 < floor * record.total


def figure(job: Job, record: CoverageRecord) -> str:
    if record.total == 0:
        return f"{RUN}: {NO_LINES}"
    text = f"{RUN}: {share(record.run, record.total)}"
    if below(job, record):
        text += f", below `evidence.min_changed_coverage` ({job.config.evidence.min_changed_coverage}%)"
    return text


def lines(job: Job, record: CoverageRecord) -> list[str]:
    if not record.measured:
        return [f"{NOT_MEASURED} ({record.why})"]
    said = [figure(job, record)]
    if record.uncovered_count:
        rest = record.uncovered_count - len(record.uncovered)
        said.append(f"{NOT_RUN}: {listed(record.uncovered)}"
                    + (f" (and {rest} more not kept)" if rest > 0 else ""))
    if record.unmeasured:
        files = sorted(record.unmeasured)
        whys = sorted(set(record.unmeasured.values()))
        said.append(f"{NOT_MEASURED} for {listed(files)} ({'; '.join(whys)})")
    return said


def batch_lines(job: Job, batch: Batch) -> list[str]:
    record = record_of(batch)
    return lines(job, record) if record is not None else []


def card_words(job: Job, batch: Batch) -> str:
    record = record_of(batch)
    if record is None:
        return ""
    if not record.measured:
        return NOT_MEASURED
    if record.total == 0:
        return f"{RUN}: {NO_LINES}"
    return f"{RUN}: {share(record.run, record.total)}"


def summed(job: Job, batches: list[Batch]) -> list[str]:
    """One line for many batches: the changed lines their tests ran, in all."""
    records = [r for b in batches if b.commit and (r := record_of(b)) is not None]
    measured = [r for r in records if r.measured]
    if not records:
        return []
    if not measured:
        return [f"{NOT_MEASURED} ({records[-1].why})"]
    run, total = sum(r.run for r in measured), sum(r.total for r in measured)
    line = f"{RUN}: {share(run, total)}" if total else f"{RUN}: {NO_LINES}"
    if len(measured) < len(records):
        line += f" ({len(records) - len(measured)} batches not measured)"
    return [line]


def milestone_lines(job: Job, milestone: int) -> list[str]:
    return summed(job, job.milestone_batches(milestone))


def job_lines(job: Job) -> list[str]:
    return [f"{line}, over the whole job" for line in summed(job, job.batches)]


def marks(job: Job, batch: Batch) -> list[LineMark]:
    record = record_of(batch)
    if record is None or not record.measured:
        return []
    found = []
    for item in record.uncovered:
        path, _, number = item.rpartition(":")
        if path and number.isdigit():
            found.append(LineMark(path, int(number), f"batch {batch.number} changed this line and "
                                  "no validating test ran it", "warning", ANNOTATION_TITLE))
    return found


def holds(job: Job, batch: Batch) -> str:
    """Why the batch's coverage needs a person: not measured, under the floor, or (without a
    floor) a changed line no test ran."""
    if batch.status is not BatchStatus.COMPLETED:
        return ""
    record = record_of(batch)
    if record is not None and nothing_to_measure(record):
        return ""  # text, data or tests only: nothing a test could run
    if record is None or not record.measured:
        return "its changed lines were not measured"
    if below(job, record) or (job.config.evidence.min_changed_coverage is None
                              and record.run < record.total):
        return f"the tests ran {share(record.run, record.total)} of its changed lines"
    return ""


def passing(job: Job, gate: OpenGate, verb: Verb, batch: Batch | None) -> str:
    """`approve` commits the batch as it is (the next attempt lets it past the floor once)."""
    if batch is None:
        return f"gate {gate.kind} passed"
    if verb is Verb.APPROVE:
        batch.approved_gates.append(gate.kind)
        return f"batch {batch.number}: {UNCOVERED_CHANGE} accepted (committed with its uncovered lines)"
    return f"batch {batch.number} will be retried"


GATE = GateRow(
    UNCOVERED_CHANGE,
    GateRule("the tests ran fewer of the batch's changed lines than "
             "`evidence.min_changed_coverage`", Verb.APPROVE,
             "commit the batch with its changed lines the tests did not run",
             frozenset({Verb.APPROVE, Verb.RETRY, Verb.SKIP}),
             ("retry", "skip <reason>", "cancel"), 4, lets_batch_through=True),
    PassRow(passing))

TEXTS = FacetTexts(FACET, batch=batch_lines, words=card_words, milestone=milestone_lines,
                   job=job_lines, marks=marks, gates=(GATE,), holds=holds)
