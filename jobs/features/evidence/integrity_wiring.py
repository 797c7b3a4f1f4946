"""The test-integrity guard as a feature of the loop: its entry in the features' tuple
(jobs/composition.py). It is active for every job (every batch, every recipe): a job whose
batches leave the tests alone only gains the `## Evidence` lines."""

from __future__ import annotations

from jobs.engine.context import Feature
from jobs.features.evidence import integrity_hooks
from jobs.features.evidence.integrity_parts import PARTS

FEATURE = Feature(
    "tests_integrity",
    measure=integrity_hooks.measure,  # each validation run's test report, kept per tree
    before_commit=integrity_hooks.before_commit,  # the `tests_weakened` gate
    parts=PARTS)
