"""How a failed batch is split, chosen from its size and what its validation costs (pure).

- **Each file alone** for a batch of at most `ALONE_UP_TO` files, in order, up to the first
  that fails, then the rest together: at most k + 1 runs for one culprit, never more than
  halving's for k <= 4; above that, **halves** (rules.py).
- **The failing tests first** (`focus`): when the runner named the tests that failed
  (jobs/decisions/blame.py `failing_tests`, the same ids the failure check re-ran), the
  parts of the batch are validated on those tests only (a failing test proves a part fails),
  and the whole validation runs on the files to be committed, which it needs in any case (they
  are rarely a part the search validated). That pays unless those tests take about as long
  as the whole validation (measured: the failure check's re-run on the batch against the
  failed run; `FOCUS_PAYS`): then the suite is its start-up, and every part is validated
  whole (a part that is the files to be committed then needs no second run).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

ALONE_UP_TO = 4
FOCUS_PAYS = 0.9  # the failing tests' run against the whole one's (both pay the start-up)


@dataclass(frozen=True)
class SplitPlan:
    alone: bool  # each file alone first, else halves
    focus: tuple[str, ...]  # the command that runs only the failing tests; (): whole runs


def choose(size: int, *, whole_s: float, focus: Sequence[str],
           focus_s: float | None) -> SplitPlan:
    """The plan for a failed batch of `size` files whose whole validation took `whole_s`;
    `focus` the command that runs only its failing tests (empty: the runner named none),
    which took `focus_s` when it was re-run (None: not measured; a part of the tests is
    assumed cheaper than all of them)."""
    pays = focus_s is None or focus_s < FOCUS_PAYS * whole_s
    return SplitPlan(alone=size <= ALONE_UP_TO, focus=tuple(focus) if focus and pays else ())


# `choose`'s shape: the feature takes another for a benchmark's baseline (bench.dateutil_split).
ChoosePlan = Callable[..., SplitPlan]


def plan_words(plan: SplitPlan, *, size: int, tests: int, whole_s: float,
               focus_s: float | None) -> str:
    """How the card and the note say the split was run."""
    how = f"each of the {size} files alone" if plan.alone else "by halves"
    if not plan.focus:
        return how
    cost = f"; {focus_s:.1f} s against {whole_s:.1f} s" if focus_s is not None else ""
    return (f"{how}, on the {tests} failing test{'s' if tests != 1 else ''} first{cost} "
            "(the whole validation once, on the files committed)")
