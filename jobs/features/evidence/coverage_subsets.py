"""A split batch's coverage (pure): each passing subset's record kept by its tree while the
batch is split, and the one of the subset that lands made the batch's record before its commit
(the batch's record is otherwise the last subset validated, which may not be the one landing)."""

from __future__ import annotations

from jobs.features.evidence.coverage_record import SUBSETS_KEPT, CoverageRecord, SubsetCoverage
from jobs.features.evidence.record import BatchEvidence, batch_evidence
from jobs.kernel.job import Batch


def keep_subset(batch: Batch, record: CoverageRecord) -> None:
    kept = batch_evidence(batch).coverage_subsets or SubsetCoverage()
    records = {tree: found for tree, found in kept.records.items() if tree != record.tree}
    records = dict(list(records.items())[-(SUBSETS_KEPT - 1):])
    batch.part(BatchEvidence).coverage_subsets = SubsetCoverage(
        records={**records, record.tree: record})


def landing_subset(batch: Batch, tree: str) -> None:
    """Before a commit of `tree`: a split batch's record is its subset's (none when that
    subset was not measured); the subsets' records are dropped."""
    kept = batch_evidence(batch).coverage_subsets
    if kept is None:
        return
    part = batch.part(BatchEvidence)
    part.coverage, part.coverage_subsets = kept.records.get(tree), None
