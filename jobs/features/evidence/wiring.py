"""The evidence as a feature of the loop: its entry in the features' tuple (jobs/composition.py),
the facets' hooks in order (one line each)."""

from __future__ import annotations

from jobs.features.evidence import integrity_hooks
from jobs.features.evidence.hooks import FacetHooks, feature
from jobs.features.evidence.parts import PARTS

HOOKS: tuple[FacetHooks, ...] = (
    FacetHooks("tests", validation=integrity_hooks.validation,  # the runners' reports
               verify=integrity_hooks.verify),  # the `tests_weakened` gate
)

FEATURE = feature("evidence", HOOKS, PARTS)
