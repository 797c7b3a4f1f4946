"""The evidence as a feature of the loop: its entry in the features' tuple (jobs/composition.py),
the facets' hooks in order (one line each)."""

from __future__ import annotations

from jobs.features.evidence import coverage_gate, coverage_probe
from jobs.features.evidence.hooks import FacetHooks, feature
from jobs.features.evidence.parts import PARTS

HOOKS: tuple[FacetHooks, ...] = (
    # changed lines run by the tests: measured around the validation; `uncovered_change`
    FacetHooks("coverage", validation=coverage_probe.probe, verify=coverage_gate.verify),
)

FEATURE = feature("evidence", HOOKS, PARTS)
