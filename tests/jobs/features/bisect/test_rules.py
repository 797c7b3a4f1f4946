"""The bisection and `batch_size: auto` rules, as pure functions: each planted failure found,
the validations within about 2·log2(k) per failing file, a flaky failure not blamed on any
file, and the sizes chosen from the outcomes."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable

import pytest

from jobs.features.bisect.rules import (
    Decided,
    Run,
    Validate,
    extra_run_budget,
    next_step,
    next_step_named_first,
)
from jobs.features.bisect.sizing import milestones_from, next_size, regroup
from jobs.features.bisect.strategy import ALONE_UP_TO, choose

Fails = Callable[[frozenset[str]], bool]


def bisect(files: list[str], fails: Fails) -> tuple[Decided, int]:
    """Drive the rules like the driver does; the whole set is known to fail."""
    known: dict[frozenset[str], list[bool]] = {frozenset(files): [False]}
    runs = 0
    while True:
        step = next_step(files, known)
        if isinstance(step, Decided):
            return step, runs
        assert isinstance(step, Validate)
        runs += 1
        assert runs <= extra_run_budget(len(files))
        subset = frozenset(step.files)
        known.setdefault(subset, []).append(not fails(subset))


FILES = [f"m{i:02d}.py" for i in range(16)]


@pytest.mark.parametrize("culprit", FILES)
def test_one_culprit_is_found_within_two_log2_k(culprit: str) -> None:
    decided, runs = bisect(FILES, lambda s: culprit in s)
    assert [c.files for c in decided.causes] == [(culprit,)]
    assert decided.causes[0].kind == "culprit"
    assert set(decided.passing) == set(FILES) - {culprit}
    # two per halving at worst, and the tree to be committed (the other 15 files) validated
    assert runs <= 2 * math.log2(len(FILES)) + 1


@pytest.mark.parametrize(("first", "second"), [(0, 15), (3, 4), (1, 9), (8, 12)])
def test_an_interaction_names_both_files(first: int, second: int) -> None:
    pair = {FILES[first], FILES[second]}
    decided, runs = bisect(FILES, lambda s: pair <= s)
    assert [(set(c.files), c.kind) for c in decided.causes] == [(pair, "interaction")]
    assert set(decided.passing) == set(FILES) - pair
    assert runs <= 2 * 2 * math.log2(len(FILES)) + 2  # two files, and the confirmation


def test_several_culprits_each_set_aside_alone() -> None:
    bad = {FILES[2], FILES[7], FILES[13]}
    decided, runs = bisect(FILES, lambda s: bool(bad & s))
    assert sorted(f for c in decided.causes for f in c.files) == sorted(bad)
    assert all(len(c.files) == 1 for c in decided.causes)
    assert runs <= 3 * (2 * math.log2(len(FILES)) + 1)


def test_a_check_that_failed_once_is_blamed_on_no_file() -> None:
    decided, runs = bisect(FILES[:6], lambda s: False)
    assert decided.causes == () and decided.passing == tuple(FILES[:6])
    assert runs == 3  # the two halves, then the whole again


def test_every_file_failing_leaves_nothing_to_commit() -> None:
    decided, _ = bisect(FILES[:4], lambda s: True)
    assert decided.passing == () and len(decided.causes) == 4


def test_the_results_alone_are_the_state() -> None:
    """Asked again with the same results, the rules ask for the same subset (a resume)."""
    known: dict[frozenset[str], list[bool]] = {frozenset(FILES[:6]): [False]}
    first = next_step(FILES[:6], known)
    assert next_step(FILES[:6], dict(known)) == first == Validate(tuple(FILES[:3]))


def test_auto_sizes_double_on_passes_and_halve_on_failures() -> None:
    assert next_size([], 16) == 2
    assert next_size([True, True, True], 16) == 16
    assert next_size([True, True, True, True], 16) == 16  # never above the limit
    assert next_size([True, True, False], 16) == 4
    assert next_size([False, False], 16) == 1  # never below 1
    assert next_size([True, None, True], 16) == 8  # a skipped batch changes nothing
    assert next_size([], 1) == 1


def test_regroup_starts_at_the_chosen_size_and_grows() -> None:
    groups = regroup(FILES[:15], 2, 8)
    assert [len(g) for g in groups] == [2, 4, 8, 1]
    assert [f for g in groups for f in g] == FILES[:15]
    assert milestones_from(1, 3, 4, 4) == [1, 2, 2, 2]


def interaction_bound(files: int, size: int) -> float:
    """The documented cost of narrowing an interaction of `size` files among `files` (rules.py
    `_fewest`), plus the whole set confirmed and the rest validated to be committed."""
    return 2 * size * math.log2(files / size) + 2 * size + 2


@pytest.mark.parametrize("triple", [(0, 1, 2), (0, 7, 15), (3, 4, 12), (1, 9, 10), (5, 6, 7),
                                    (2, 8, 14)])
def test_an_interaction_of_three_files_names_all_three(triple: tuple[int, int, int]) -> None:
    together = {FILES[i] for i in triple}
    decided, runs = bisect(FILES, lambda s: together <= s)
    assert [(set(c.files), c.kind) for c in decided.causes] == [(together, "interaction")]
    assert set(decided.passing) == set(FILES) - together
    assert runs <= interaction_bound(len(FILES), 3)


def test_every_three_file_interaction_among_sixteen_is_narrowed_within_the_bound() -> None:
    worst = 0
    for triple in itertools.combinations(range(len(FILES)), 3):
        together = {FILES[i] for i in triple}
        decided, runs = bisect(FILES, lambda s, t=together: t <= s)  # type: ignore[misc]
        assert [set(c.files) for c in decided.causes] == [together], triple
        worst = max(worst, runs)
    assert worst <= interaction_bound(len(FILES), 3)


def test_an_interaction_beside_a_culprit_is_reported_apart() -> None:
    together, alone = {FILES[1], FILES[6], FILES[11]}, FILES[14]
    decided, _ = bisect(FILES, lambda s: together <= s or alone in s)
    found = sorted((sorted(c.files), c.kind) for c in decided.causes)
    assert found == sorted([(sorted(together), "interaction"), ([alone], "culprit")])
    assert set(decided.passing) == set(FILES) - together - {alone}


def bisect_named(files: list[str], named: set[str], fails: Fails) -> tuple[Decided, list[set[str]]]:
    """Drive `next_step_named_first` (a red CI check whose annotations name `named`)."""
    known: dict[frozenset[str], list[bool]] = {frozenset(files): [False]}
    asked: list[set[str]] = []
    while True:
        step = next_step_named_first(files, named, known)
        if isinstance(step, Decided):
            return step, asked
        asked.append(set(step.files))
        assert len(asked) <= extra_run_budget(len(files))
        known.setdefault(frozenset(step.files), []).append(not fails(frozenset(step.files)))


def test_a_named_culprit_costs_the_rest_and_itself() -> None:
    culprit = FILES[5]
    decided, asked = bisect_named(FILES[:8], {culprit}, lambda s: culprit in s)
    rest = set(FILES[:8]) - {culprit}
    assert asked == [rest, {culprit}]  # the batch without it first, then it alone
    assert [c.files for c in decided.causes] == [(culprit,)]
    assert set(decided.passing) == rest


def test_a_wrongly_named_file_still_finds_the_culprit() -> None:
    culprit, innocent = FILES[6], FILES[1]
    decided, asked = bisect_named(FILES[:8], {innocent}, lambda s: culprit in s)
    assert asked[0] == set(FILES[:8]) - {innocent}
    assert [c.files for c in decided.causes] == [(culprit,)]
    assert set(decided.passing) == set(FILES[:8]) - {culprit}


def test_two_named_files_of_which_one_fails() -> None:
    culprit, named = FILES[2], {FILES[2], FILES[7]}
    decided, asked = bisect_named(FILES[:8], named, lambda s: culprit in s)
    assert asked[0] == set(FILES[:8]) - named
    assert all(s <= named or s == set(FILES[:8]) - {culprit} for s in asked[1:]), asked
    assert [c.files for c in decided.causes] == [(culprit,)]
    assert set(decided.passing) == set(FILES[:8]) - {culprit}


FOCUS = ("python", "-m", "pytest", "tests/test_imports.py::test_version")


def split(files: list[str], fails: Fails, *, alone: bool,
          focus: tuple[str, ...] = ()) -> tuple[Decided, list[Validate]]:
    """Drive the rules as the driver does with a plan (strategy.py): the whole set failed its
    whole validation, which named failing tests (`focus`) when given."""
    known: dict[frozenset[str], list[Run | bool]] = {
        frozenset(files): [Run(passed=False, refocus=focus)]}
    asked: list[Validate] = []
    while True:
        step = next_step(files, known, alone=alone)
        if isinstance(step, Decided):
            return step, asked
        asked.append(step)
        assert len(asked) <= extra_run_budget(len(files))
        subset = frozenset(step.files)
        ok = not fails(subset)
        known.setdefault(subset, []).append(
            Run(ok, step.focus, () if ok or step.focus else focus))


@pytest.mark.parametrize("size", [2, 3, 4])
@pytest.mark.parametrize("at", [0, -1])
def test_a_small_batch_tries_each_file_alone_then_commits_the_rest(size: int, at: int) -> None:
    files = FILES[:size]
    culprit = files[at]
    decided, asked = split(files, lambda s: culprit in s, alone=True)
    assert [c.files for c in decided.causes] == [(culprit,)]
    assert set(decided.passing) == set(files) - {culprit}
    # each file alone up to the culprit, then the rest (known when it is one file that passed
    # alone); never more runs than halving
    alone = [{f} for f in files[:files.index(culprit) + 1]]
    rest = [set(files) - {culprit}] if size > 2 or at == 0 else []
    assert [set(v.files) for v in asked] == alone + rest
    assert len(asked) <= len(split(files, lambda s: culprit in s, alone=False)[1])


def test_each_file_alone_finds_a_second_culprit_when_the_rest_fails_again() -> None:
    files = FILES[:4]
    bad = {files[0], files[2]}
    decided, asked = split(files, lambda s: bool(bad & s), alone=True)
    assert sorted(c.files for c in decided.causes) == sorted((f,) for f in bad)
    # the first alone, the rest (fails), the next two alone, the two good files together
    assert [set(v.files) for v in asked] == [{files[0]}, set(files[1:]), {files[1]},
                                             {files[2]}, {files[1], files[3]}]


def test_files_that_pass_alone_are_narrowed_as_an_interaction() -> None:
    files = FILES[:4]
    pair = {files[1], files[3]}
    decided, asked = split(files, lambda s: pair <= s, alone=True)
    assert [(set(c.files), c.kind) for c in decided.causes] == [(pair, "interaction")]
    assert asked[4] == Validate(tuple(files))  # confirmed whole before it is called one


def test_with_the_failing_tests_named_only_the_files_committed_run_the_whole_validation(
        ) -> None:
    files = FILES[:3]
    decided, asked = split(files, lambda s: files[1] in s, alone=True, focus=FOCUS)
    assert [c.files for c in decided.causes] == [(files[1],)]
    assert [(v.files, v.focus) for v in asked] == [
        ((files[0],), FOCUS), ((files[1],), FOCUS), ((files[0], files[2]), ())]


def test_a_second_failure_of_the_rest_is_searched_on_its_own_failing_tests() -> None:
    """The rest fails its whole validation with other tests: the search goes on with those
    (the first search's results on other tests are not reused for them)."""
    files = FILES[:8]
    first, second = files[6], files[1]
    tests_of = {first: FOCUS, second: ("python", "-m", "pytest", "tests/test_tz.py")}

    def fails(s: frozenset[str], focus: tuple[str, ...]) -> bool:
        return any(f in s and (not focus or tests_of[f] == focus) for f in tests_of)

    known: dict[frozenset[str], list[Run | bool]] = {
        frozenset(files): [Run(passed=False, refocus=FOCUS)]}
    asked: list[Validate] = []
    while not isinstance(step := next_step(files, known), Decided):
        asked.append(step)
        subset = frozenset(step.files)
        ok = not fails(subset, step.focus)
        refocus = () if ok or step.focus else tests_of[
            next(f for f in (first, second) if f in subset)]
        known.setdefault(subset, []).append(Run(ok, step.focus, refocus))
    assert sorted(c.files for c in step.causes) == sorted([(first,), (second,)])
    whole = [v for v in asked if not v.focus]
    assert [set(v.files) for v in whole] == [set(files) - {first}, set(files) - {first, second}]
    assert {v.focus for v in asked if v.focus} == {FOCUS, tests_of[second]}


def test_a_subset_holding_a_failing_set_is_not_validated() -> None:
    files = FILES[:4]
    known: dict[frozenset[str], list[Run | bool]] = {
        frozenset(files): [False], frozenset(files[:1]): [False], frozenset(files[2:]): [True]}
    # [a, b] holds [a], which failed: implied, so the search goes straight to [a]'s answer
    decided = next_step(files, known)
    assert decided == Validate(tuple(files[1:]))  # the rest, to be committed


def test_the_plan_follows_the_size_and_the_measured_cost() -> None:
    assert choose(ALONE_UP_TO, whole_s=9, focus=FOCUS, focus_s=0.5).alone
    assert not choose(ALONE_UP_TO + 1, whole_s=9, focus=FOCUS, focus_s=0.5).alone
    assert choose(3, whole_s=9, focus=FOCUS, focus_s=0.5).focus == FOCUS
    assert choose(3, whole_s=9, focus=FOCUS, focus_s=None).focus == FOCUS
    assert choose(3, whole_s=1.0, focus=FOCUS, focus_s=0.9).focus == ()  # no cheaper
    assert choose(3, whole_s=9, focus=(), focus_s=None).focus == ()  # no tests named
