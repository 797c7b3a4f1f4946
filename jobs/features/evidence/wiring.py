"""The evidence as a feature of the loop: its entry in the features' tuple (jobs/composition.py),
the facets' hooks in order (one line each)."""

from __future__ import annotations

from jobs.features.evidence import (
    coverage_gate,
    coverage_probe,
    forecast_store,
    integrity_hooks,
    shapes_hooks,
)
from jobs.features.evidence.hooks import FacetHooks, feature
from jobs.features.evidence.parts import PARTS

HOOKS: tuple[FacetHooks, ...] = (
    # the tests before and after (the runners' reports); `tests_weakened`, which comes first:
    # a batch that weakened the tests is not judged by what they ran
    FacetHooks("tests", validation=integrity_hooks.validation, verify=integrity_hooks.verify),
    # the edit shapes: recorded before each commit, the plan's dry run, known milestones pass
    FacetHooks("shapes", verify=shapes_hooks.record_shapes, planned=shapes_hooks.dry_run,
               before_milestone_end=shapes_hooks.pass_known_milestone),
    # the plan's forecast: earlier jobs' figures read, fixed at approval, this job's kept
    FacetHooks("forecast", planned=forecast_store.planned, safe_point=forecast_store.safe_point,
               at_end=forecast_store.at_end),
    # changed lines run by the tests: measured around the validation; `uncovered_change`
    FacetHooks("coverage", validation=coverage_probe.probe, verify=coverage_gate.verify),
)

FEATURE = feature("evidence", HOOKS, PARTS)
