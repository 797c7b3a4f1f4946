"""The evidence's facets, in the order their lines are shown (one line each: a facet's
`FacetTexts`, texts.py). A facet's hooks are its line in wiring.py's `HOOKS`."""

from __future__ import annotations

from jobs.features.evidence import integrity_parts
from jobs.features.evidence.texts import FacetTexts

FACETS: tuple[FacetTexts, ...] = (
    integrity_parts.TEXTS,  # tests before → after; the `tests_weakened` gate
)
