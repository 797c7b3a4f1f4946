"""The coverage facet's verdict before a batch is committed (a `VerifyHook`): a batch whose
tests ran fewer of its changed lines than `evidence.min_changed_coverage` stops at the
`uncovered_change` gate (unless a person approved it there for this batch). The part of a split
batch that lands is judged by its own subset's record."""

from __future__ import annotations

from jobs.engine.attempt_outcome import AttemptOutcome, Result
from jobs.engine.validation_hooks import TreeUnderTest
from jobs.features.evidence.coverage_subsets import landing_subset
from jobs.features.evidence.coverage_texts import UNCOVERED_CHANGE, below, figure, record_of
from jobs.kernel.job import Batch, Job
from jobs.kernel.records import Attempt


def verify(job: Job, batch: Batch, attempt: Attempt,
           under_test: TreeUnderTest) -> AttemptOutcome | None:
    landing_subset(batch, under_test.tree)
    record = record_of(batch)
    if record is None or not below(job, record) or UNCOVERED_CHANGE in batch.approved_gates:
        return None
    return AttemptOutcome(Result.GATED, gate=UNCOVERED_CHANGE, reason=figure(job, record))
