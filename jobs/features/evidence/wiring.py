"""The evidence as a feature of the loop: its entry in the features' tuple (jobs/composition.py),
the facets' hooks in order (one line each)."""

from __future__ import annotations

from jobs.features.evidence import coverage_gate, coverage_probe, integrity_hooks
from jobs.features.evidence.hooks import FacetHooks, feature
from jobs.features.evidence.parts import PARTS

HOOKS: tuple[FacetHooks, ...] = (
    # the tests before and after (the runners' reports); `tests_weakened`, which comes first:
    # a batch that weakened the tests is not judged by what they ran
    FacetHooks("tests", validation=integrity_hooks.validation, verify=integrity_hooks.verify),
    # changed lines run by the tests: measured around the validation; `uncovered_change`
    FacetHooks("coverage", validation=coverage_probe.probe, verify=coverage_gate.verify),
)

FEATURE = feature("evidence", HOOKS, PARTS)
