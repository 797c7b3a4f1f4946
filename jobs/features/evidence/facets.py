"""The evidence's facets, in the order their lines are shown (one line each: a facet's
`FacetTexts`, texts.py). A facet's hooks are its line in wiring.py's `HOOKS`."""

from __future__ import annotations

from jobs.features.evidence import coverage_texts, forecast_texts, integrity_parts, shapes_texts
from jobs.features.evidence.failures import FAILURES
from jobs.features.evidence.texts import FacetTexts

FACETS: tuple[FacetTexts, ...] = (
    coverage_texts.TEXTS,  # changed lines run by the tests; the `uncovered_change` gate
    shapes_texts.TEXTS,  # the batches' edit shapes, outliers first; the plan's dry run
    forecast_texts.TEXTS,  # the plan's forecast; the note's forecast against the actual
    integrity_parts.TEXTS,  # tests before → after; the `tests_weakened` gate
    FAILURES,  # whose each failed validation was: flaky, pre-existing, environment, the edit's
)
