"""Split batches as a feature of the loop: its entry in the features' tuple (jobs/composition.py)."""

from __future__ import annotations

from jobs.engine.context import Feature
from jobs.features.bisect.by_ci import CiCandidates
from jobs.features.bisect.driver import BisectHooks
from jobs.features.bisect.focus_first import focus_first
from jobs.features.bisect.notes import PARTS


def bisect_feature(*, ci: CiCandidates | None, enabled: bool = True) -> Feature:
    """`ci`: what a split asks of CI (the CI feature's `CANDIDATES`; None: a red CI check never
    splits a batch). `enabled=False` keeps a failed batch whole (the benchmark's baseline)."""
    return Feature(name="bisect", batch=BisectHooks(enabled=enabled, ci=ci),
                   validation=focus_first, parts=PARTS)
