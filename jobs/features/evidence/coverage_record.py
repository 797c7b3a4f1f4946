"""The coverage facet's record of a batch (pure): which of its changed lines the validating
tests ran, the ones they did not (`path:line`), and the files not measured, with why."""

from __future__ import annotations

from pydantic import BaseModel, Field

FACET = "coverage"  # the facet's name (its record: `BatchEvidence.coverage`)
SUBSETS_KEPT = 32  # while a batch is split: the passing subsets' records kept, by tree


class SubsetCoverage(BaseModel):
    """The records of a split batch's passing subsets; the one that lands becomes its record."""

    records: dict[str, CoverageRecord] = {}
UNCOVERED_KEPT = 1_000  # `path:line` items kept in the record; the count says how many in all
UNMEASURED_KEPT = 50


class CoverageRecord(BaseModel):
    """`measured` false: nothing could be measured (`why` says why), and nothing is claimed."""

    measured: bool
    why: str = ""  # why nothing (or some file) was measured
    run: int = 0  # changed executable lines the tests ran
    total: int = 0  # changed executable lines in measured files
    uncovered: list[str] = Field(default=[], max_length=UNCOVERED_KEPT)  # `path:line`, in order
    uncovered_count: int = 0
    unmeasured: dict[str, str] = {}  # a changed file not measured -> why
    tools: list[str] = []  # what measured: "coverage.py 7.6.1", "NODE_V8_COVERAGE"
    tree: str = ""  # the tree measured ('' in records of earlier versions)

    @property
    def percent(self) -> float:
        return 100.0 * self.run / self.total if self.total else 100.0


NOT_CODE = "not code"
TEST_FILE = "a test file: the tests themselves are not measured"


def nothing_to_measure(record: CoverageRecord) -> bool:
    """Whether the batch changed no code to measure (only text, data or test files)."""
    return bool(record.unmeasured) and record.total == 0 and \
        all(why in (NOT_CODE, TEST_FILE) for why in record.unmeasured.values())


def not_measured(why: str) -> CoverageRecord:
    return CoverageRecord(measured=False, why=why)
