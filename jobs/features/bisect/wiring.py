"""Split batches as a feature of the loop: its entry in the features' tuple (jobs/composition.py)."""

from __future__ import annotations

from jobs.engine.context import Feature
from jobs.features.bisect.driver import BisectHooks


def bisect_feature(*, enabled: bool = True) -> Feature:
    """`enabled=False` keeps a failed batch whole (the benchmark's baseline)."""
    return Feature(name="bisect", batch=BisectHooks(enabled=enabled))


FEATURE = bisect_feature()
