"""Split batches as a feature of the loop: its entry in the features' tuple (jobs/composition.py)."""

from __future__ import annotations

from jobs.engine.context import Feature
from jobs.features.bisect.by_ci import CiCandidates
from jobs.features.bisect.driver import BisectHooks
from jobs.features.bisect.focus_first import focus_first
from jobs.features.bisect.notes import PARTS
from jobs.features.bisect.strategy import ChoosePlan, choose


def bisect_feature(*, ci: CiCandidates | None, enabled: bool = True,
                   plan: ChoosePlan = choose) -> Feature:
    """`ci`: what a split asks of CI (the CI feature's `CANDIDATES`; None: a red CI check never
    splits a batch). `enabled=False` keeps a failed batch whole, `plan` another split plan
    than strategy.py's (the benchmarks' baselines)."""
    return Feature(name="bisect", batch=BisectHooks(enabled=enabled, ci=ci, plan=plan),
                   validation=focus_first, parts=PARTS)
