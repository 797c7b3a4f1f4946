"""A facet's hooks (`FacetHooks`) and how the facets' hooks run as the one evidence feature's:
around the validation that accepts a batch, before its commit, once the plan is made, before a
milestone ends and when the job ends."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from jobs.engine.context import (
    Feature,
    JobContext,
    JobHook,
    MilestoneEndHook,
    Outcome,
    SafePointHook,
)
from jobs.engine.validation_hooks import (
    ValidationHook,
    VerifyHook,
    around_validation,
    first_stop,
)
from jobs.kernel.feature_parts import FeatureParts


@dataclass(frozen=True)
class FacetHooks:
    """One facet's hooks, each optional (their meaning is `Feature`'s, jobs/engine/context.py)."""

    name: str
    validation: ValidationHook | None = None  # a probe around the run (coverage)
    verify: VerifyHook | None = None  # a verdict before the commit (uncovered_change)
    planned: JobHook | None = None  # the plan is made, before the baseline and the plan gate
    before_milestone_end: MilestoneEndHook | None = None
    at_end: JobHook | None = None
    safe_point: SafePointHook | None = None  # before the next piece of work (never holds it)


def feature(name: str, hooks: Sequence[FacetHooks], parts: FeatureParts) -> Feature:
    """The facets' hooks as one feature's, in the facets' order."""
    planned = [h.planned for h in hooks if h.planned is not None]
    ends = [h.before_milestone_end for h in hooks if h.before_milestone_end is not None]
    at_end = [h.at_end for h in hooks if h.at_end is not None]
    safe_points = [h.safe_point for h in hooks if h.safe_point is not None]

    def run_safe_points(engine: JobContext) -> Outcome | bool | None:
        return next((taken for hook in safe_points if (taken := hook(engine))), None)

    def run_planned(engine: JobContext) -> None:
        for hook in planned:
            hook(engine)

    def milestone_end(engine: JobContext, milestone: int) -> Outcome | None:
        return next((held for hook in ends if (held := hook(engine, milestone)) is not None),
                    None)

    def run_at_end(engine: JobContext) -> None:
        for hook in at_end:
            hook(engine)

    return Feature(
        name,
        validation=around_validation([h.validation for h in hooks if h.validation is not None]),
        verify=first_stop([h.verify for h in hooks if h.verify is not None]),
        planned=run_planned if planned else None,
        before_milestone_end=milestone_end if ends else None,
        at_end=run_at_end if at_end else None,
        safe_point=run_safe_points if safe_points else None,
        parts=parts)
