"""A set-aside batch validated on its failing tests first (the split's `validation` hook).

Its split showed its files fail on the tests the batch's failure named (strategy.py's focus):
its own attempt runs the failing command on those tests only first, and a failure there is
its answer (a failing test proves the tree fails; the record shows the command that ran).
Only when they pass does the whole validation run, as for any batch. A batch that was not
set aside, or whose split named no tests, is validated as usual."""

from __future__ import annotations

import shlex

from jobs.engine.validation_hooks import (
    RunValidation,
    TreeUnderTest,
    ValidationRequest,
    ValidationResult,
)
from jobs.features.bisect.record import bisect_of
from jobs.kernel.job import Batch, Job
from jobs.kernel.records import Attempt


def set_aside_focus(job: Job, batch: Batch) -> tuple[int, list[str]] | None:
    """Which validation command (its index) and the focused command it failed with when the
    split validated `batch`'s files alone on the failing tests; None otherwise."""
    source = next((b for b in job.batches if b.number == bisect_of(batch).split_from), None)
    state = bisect_of(source).split if source is not None else None
    if state is None:
        return None
    files = frozenset(batch.files)
    failed = next((r for r in reversed(state.results)
                   if r.focus and not r.passed and frozenset(r.files) == files), None)
    origin = next((r for r in state.results if failed and r.refocus == failed.focus), None)
    if failed is None or origin is None:
        return None
    displays = [shlex.join(argv) for argv in job.config.validate_argvs()]
    if origin.failed_command not in displays:
        return None  # the configuration changed since the split
    return displays.index(origin.failed_command), list(failed.focus)


def focus_first(job: Job, batch: Batch, attempt: Attempt, under_test: TreeUnderTest,
                request: ValidationRequest, run: RunValidation) -> ValidationResult:
    """Around a batch's validation (`Feature.validation`): a set-aside batch's failing tests
    first, the whole validation only when they pass."""
    found = set_aside_focus(job, batch) if bisect_of(batch).split_from is not None else None
    if found is None:
        return run(request)
    index, focus = found
    evidence, failure, code = run(ValidationRequest(
        argvs=request.argvs, env=request.env, writable=request.writable,
        env_for=request.env_for, argv_for={**request.argv_for, index: tuple(focus)}))
    if failure is None:
        return run(request)  # they pass on this head: the whole validation decides
    if len(evidence) - 1 == index:  # the record names the command that ran
        failure = failure.model_copy(update={"argv": focus})
        evidence = [*evidence[:-1], failure]
    return evidence, failure, code
