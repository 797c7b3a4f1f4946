"""The bisection of a failed batch as a pure function of what is decided: which subset to
validate next, or which files fail (alone, or only together) and which pass.

Each call starts from the top and looks decided subsets up, so the record of results alone is
the state: a resumed bisection asks for exactly the subset it would have asked for next.
Subsets are validated whole (the base plus those files' edits); a subset of a passing subset
is assumed to pass and a superset of a failing one to fail (no run), but the files committed
are always a subset validated as such, by the whole validation. A subset's latest result
counts. Before files are called an interaction (both halves pass, together they fail) the
failing set is validated once more, whole: a flaky check that failed once then passes, and
nothing is set aside for it.

The search runs in one of two ways (strategy.py chooses): each file alone (`alone`: a small
batch) or by halves. With a `focus`, a whole validation that failed named its failing tests,
and the search validates the parts of that set on those tests only (a failing test proves a
failure; a pass is confirmed by the whole validation of the files to be committed).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass

Focus = tuple[str, ...]  # the command that runs only a failure's failing tests; (): none


@dataclass(frozen=True)
class Run:
    """One validation of a subset: its result, the focus it ran on (() the whole validation)
    and, for a whole validation that failed, the focus its parts are searched with."""

    passed: bool
    focus: Focus = ()
    refocus: Focus = ()


Known = Mapping[frozenset[str], Sequence[Run | bool]]  # each subset's runs, oldest first
_Passes = Callable[[Sequence[str]], bool]  # whether a subset passes, or _Ask for it
_Confirm = Callable[[Sequence[str]], bool]  # the same, from a second whole result


@dataclass(frozen=True)
class Validate:
    """Validate these files' edits next (in the batch's order); only on `focus` when given."""

    files: tuple[str, ...]
    focus: Focus = ()


@dataclass(frozen=True)
class Cause:
    files: tuple[str, ...]
    kind: str  # culprit | interaction


@dataclass(frozen=True)
class Decided:
    """The bisection's answer: the passing files (validated together) and what fails."""

    passing: tuple[str, ...]
    causes: tuple[Cause, ...]


class _Ask(Exception):
    def __init__(self, files: tuple[str, ...], focus: Focus = ()) -> None:
        self.files = files
        self.focus = focus


def extra_run_budget(size: int) -> int:
    """Validations a bisection may run before giving up: generous next to the ~2·log2(k) per
    failing file it needs, so only results that contradict each other (a flaky check) hit it."""
    return 4 * size + 4


def _runs(known: Known) -> dict[frozenset[str], list[Run]]:
    return {subset: [r if isinstance(r, Run) else Run(passed=r) for r in results]
            for subset, results in known.items()}


def next_step(files: Sequence[str], known: Known, *, cut: int = 0,
              alone: bool = False) -> Validate | Decided:
    """The next subset to validate, or the answer once every needed subset is decided. `cut`
    (when not 0) is where the whole batch is split first, instead of its middle; `alone`:
    each file of a failing set is validated alone first (a small batch), else by halves."""
    order = {path: index for index, path in enumerate(files)}
    runs = _runs(known)

    def ordered(subset: Collection[str]) -> tuple[str, ...]:
        return tuple(sorted(set(subset), key=order.__getitem__))

    def searching(focus: Focus) -> _Passes:
        """Whether a subset passes, on `focus` (whole results count on every focus)."""
        latest = {subset: counted[-1].passed for subset, results in runs.items()
                  if (counted := [r for r in results if r.focus in ((), focus)])}
        passing = [subset for subset, ok in latest.items() if ok]
        failing = [subset for subset, ok in latest.items() if not ok]

        def passes(subset: Sequence[str]) -> bool:
            wanted = frozenset(subset)
            if wanted in latest:
                return latest[wanted]
            if any(wanted <= other for other in passing):
                return True  # implied: a part of a passing set
            if any(other <= wanted for other in failing):
                return False  # implied: it holds a failing set
            raise _Ask(ordered(wanted), focus)
        return passes

    def whole(subset: Sequence[str]) -> Run:
        """Its latest whole validation, never inferred: the files committed are a tree
        validated."""
        results = [r for r in runs.get(frozenset(subset), ()) if not r.focus]
        if not results:
            raise _Ask(ordered(subset))
        return results[-1]

    def confirmed(subset: Sequence[str]) -> bool:
        """Whether `subset` failed its whole validation twice (asked again after one)."""
        results = [r for r in runs.get(frozenset(subset), ()) if not r.focus]
        if len(results) < 2:
            raise _Ask(ordered(subset))
        return not results[-1].passed

    try:
        remaining = list(files)
        causes: list[Cause] = []
        while remaining and not (last := whole(remaining)).passed:
            first_cut = cut if len(remaining) == len(files) else 0
            passes = searching(last.refocus)
            found = (_alone(remaining, passes) or _together(remaining, passes, confirmed)) \
                if alone and not first_cut \
                else _find_cause(remaining, passes, confirmed, first_cut)
            if not found:
                continue  # the set passed when validated again: look at it afresh
            for cause in found:
                causes.append(Cause(ordered(cause.files), cause.kind))
                remaining = [path for path in remaining if path not in cause.files]
        return Decided(tuple(remaining), tuple(causes))
    except _Ask as ask:
        return Validate(ask.files, ask.focus)


def next_step_named_first(files: Sequence[str], named: Collection[str],
                          known: Known) -> Validate | Decided:
    """`next_step`, when the failure named some of the files (a red CI check's annotations):
    the batch without them is validated first, then the bisection looks among the named files
    first (the rest, if it passed, is known to pass: no run is spent on its parts)."""
    first = [path for path in files if path in named]
    rest = [path for path in files if path not in named]
    if first and rest and frozenset(rest) not in known:
        return Validate(tuple(rest))
    return next_step(first + rest, known, cut=len(first) if rest else 0)


def _halves(files: Sequence[str]) -> tuple[list[str], list[str]]:
    middle = len(files) // 2
    return list(files[:middle]), list(files[middle:])


def _alone(failing: list[str], passes: _Passes) -> list[Cause]:
    """Each file validated alone, in order, up to the first that fails: a culprit (the rest is
    then validated whole, which finds whether another fails). [] when every file passes alone."""
    return next(([Cause((path,), "culprit")] for path in failing if not passes([path])), [])


def _together(failing: list[str], passes: _Passes, confirmed: _Confirm) -> list[Cause]:
    """Files that each pass alone and fail together: confirmed first (a second whole failure),
    then narrowed; [] when the set passed when validated again."""
    if not confirmed(failing):
        return []
    return [Cause(tuple(_fewest(fixed=[], candidates=failing, passes=passes)), "interaction")]


def _find_cause(failing: list[str], passes: _Passes, confirmed: _Confirm,
                cut: int = 0) -> list[Cause]:
    """One cause of a failing set: a file that fails alone, or files that fail only together;
    [] when a set that seemed to fail passed when validated again. The set is split at `cut`
    first (when not 0), then halved."""
    while len(failing) > 1:
        first, second = (failing[:cut], failing[cut:]) if 0 < cut < len(failing) \
            else _halves(failing)
        cut = 0
        if not passes(first):
            failing = first
        elif not passes(second):
            failing = second
        elif not confirmed(failing):
            return []
        else:  # both halves pass, together they fail: an interaction across the halves
            return [Cause(tuple(_fewest(fixed=[], candidates=failing, passes=passes)),
                          "interaction")]
    return [Cause(tuple(failing), "culprit")]


def _fewest(*, fixed: list[str], candidates: list[str], passes: _Passes) -> list[str]:
    """The files of `candidates` that fail together with `fixed`, each of them needed (`fixed`
    passes; `fixed` with all of `candidates` fails): QuickXplain's divide and conquer. When
    one half is enough with `fixed` it is narrowed alone; else the files needed from the
    second half are found with all of the first fixed, then those of the first half with only
    them fixed. For an interaction of m files among k that costs at most about
    2·m·log2(k/m) + 2·m validations (m = 2: within 4·log2(k); m = 3: within 6·log2(k))."""
    if len(candidates) <= 1:
        return list(candidates)
    first, second = _halves(candidates)
    if not passes(fixed + first):
        return _fewest(fixed=fixed, candidates=first, passes=passes)
    if not passes(fixed + second):
        return _fewest(fixed=fixed, candidates=second, passes=passes)
    from_second = _fewest(fixed=fixed + first, candidates=second, passes=passes)
    from_first = _fewest(fixed=fixed + from_second, candidates=first, passes=passes)
    return from_first + from_second
