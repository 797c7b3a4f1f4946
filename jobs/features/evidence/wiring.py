"""The evidence as a feature of the loop: its entry in the features' tuple (jobs/composition.py),
the facets' hooks in order (one line each)."""

from __future__ import annotations

from jobs.features.evidence.hooks import FacetHooks, feature
from jobs.features.evidence.parts import PARTS

HOOKS: tuple[FacetHooks, ...] = (
)

FEATURE = feature("evidence", HOOKS, PARTS)
