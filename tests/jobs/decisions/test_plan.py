"""The pure planner: scope selection, discovery of `path:line` targets, batching, milestones."""

from __future__ import annotations

import random
from collections import Counter
from posixpath import dirname

from jobs.decisions.plan import (
    Plan,
    PlannedBatch,
    build_plan,
    compile_patterns,
    find_targets,
    group_batches,
    matching_lines,
    select_scope,
)

TRACKED = [
    "README.md",
    "setup.py",
    "src/app.py",
    "src/util.py",
    "src/notes.txt",
    "src/pkg/core.py",
    "src/vendor/six.py",
    "src/vendor/deep/x.py",
    "tests/test_app.py",
    ".github/workflows/ci.py",
]


# --- select_scope --------------------------------------------------------------------------


def test_select_scope_paths_exclude_never() -> None:
    scope = select_scope(TRACKED, paths=["src/**/*.py"], exclude=["src/vendor/**"],
                         never=["src/util.py"])
    assert scope == ["src/app.py", "src/pkg/core.py"]


def test_select_scope_union_of_paths_sorted_and_deduplicated() -> None:
    scope = select_scope([*TRACKED, "src/app.py"], paths=["tests/**", "src/*.py", "src/app.py"],
                         exclude=[], never=[])
    assert scope == ["src/app.py", "src/util.py", "tests/test_app.py"]


def test_select_scope_never_wins_over_paths() -> None:
    scope = select_scope(TRACKED, paths=["**/*.py"], exclude=[], never=[".github/**"])
    assert ".github/workflows/ci.py" not in scope
    assert "setup.py" in scope


def test_select_scope_basename_pattern_any_depth() -> None:
    scope = select_scope(TRACKED, paths=["*.py"], exclude=["test_*.py"], never=[])
    assert scope == sorted(p for p in TRACKED if p.endswith(".py") and "test_" not in p)


def test_select_scope_nothing_matches() -> None:
    assert select_scope(TRACKED, paths=["docs/**"], exclude=[], never=[]) == []


def test_select_scope_accepts_any_iterable() -> None:
    assert select_scope(iter(TRACKED), paths=["*.md"], exclude=[], never=[]) == ["README.md"]


# --- matching_lines / find_targets ---------------------------------------------------------


def lines_of(text: str, *patterns: str) -> tuple[int, ...]:
    return matching_lines(text, compile_patterns(patterns))


def test_matching_lines_one_based() -> None:
    text = "print(1)\nx = 2\nprint(3)\n"
    assert lines_of(text, r"\bprint\(") == (1, 3)


def test_matching_lines_union_of_patterns_without_duplicates() -> None:
    text = "a = 1\nb = 2\nab = 3\nc = 4\n"
    assert lines_of(text, r"\ba\b", r"b", r"ab") == (1, 2, 3)


def test_matching_lines_many_matches_on_one_line_count_once() -> None:
    assert lines_of("print(1); print(2); print(3)\n", r"print\(") == (1,)


def test_matching_lines_multi_line_match_counts_its_first_line() -> None:
    text = "x = 1\nfoo(\n  bar)\ny = 2\n"
    assert lines_of(text, r"foo\(\s*bar\)") == (2,)


def test_matching_lines_multiline_anchors() -> None:
    text = "import os\nx = 1\nimport sys"
    assert lines_of(text, r"^import ") == (1, 3)
    assert lines_of(text, r"1$") == (2,)


def test_matching_lines_last_line_without_newline_and_crlf() -> None:
    assert lines_of("a\nb\nTODO", "TODO") == (3,)
    assert lines_of("a\r\nTODO\r\n", "TODO") == (2,)


def test_matching_lines_no_patterns_or_no_match() -> None:
    assert matching_lines("print(1)\n", []) == ()
    assert lines_of("x = 1\n", "print") == ()
    assert lines_of("", "print") == ()


def test_matching_lines_match_on_first_character_of_a_line() -> None:
    assert lines_of("\n\nX\n", "X") == (3,)


def test_matching_lines_never_past_the_last_line() -> None:
    assert lines_of("a\n", "^") == (1,)
    assert lines_of("x = 1\n", r"[ \t]*$") == (1,)


def test_find_targets_only_matching_files_sorted() -> None:
    contents = {"b.py": "print(1)\n", "a.py": "x\nprint(2)\n", "c.py": "nothing\n"}
    found = find_targets(contents, [r"print\("])
    assert found == {"a.py": (2,), "b.py": (1,)}
    assert list(found) == ["a.py", "b.py"]


def test_find_targets_union() -> None:
    contents = {"a.py": "print(1)\nlogging.warn(2)\n"}
    assert find_targets(contents, [r"print\(", r"\.warn\("]) == {"a.py": (1, 2)}


# --- group_batches -------------------------------------------------------------------------


def test_group_batches_respects_batch_size() -> None:
    files = [f"f{i:02}.py" for i in range(12)]
    batches = group_batches(files, 5)
    assert [len(b) for b in batches] == [5, 5, 2]
    assert [f for b in batches for f in b] == sorted(files)


def test_group_batches_small_directory_never_split() -> None:
    files = ["a/1.py", "a/2.py", "a/3.py", "b/1.py", "b/2.py", "b/3.py"]
    assert group_batches(files, 4) == [["a/1.py", "a/2.py", "a/3.py"], ["b/1.py", "b/2.py", "b/3.py"]]


def test_group_batches_directories_share_a_batch_when_they_fit() -> None:
    files = ["a/1.py", "a/2.py", "b/1.py", "b/2.py", "c/1.py"]
    assert group_batches(files, 4) == [["a/1.py", "a/2.py", "b/1.py", "b/2.py"], ["c/1.py"]]


def test_group_batches_large_directory_fills_whole_batches() -> None:
    big = [f"big/{i:02}.py" for i in range(7)]
    batches = group_batches(["a/x.py", *big], 3)
    # `a` is flushed alone rather than topped up with part of `big`
    assert batches[0] == ["a/x.py"]
    assert batches[1] == big[0:3]
    assert batches[2] == big[3:6]
    assert big[6] in batches[3]


def test_group_batches_exact_fit_and_size_one() -> None:
    assert group_batches(["a/1", "a/2", "b/1", "b/2"], 2) == [["a/1", "a/2"], ["b/1", "b/2"]]
    assert group_batches(["z", "y", "x"], 1) == [["x"], ["y"], ["z"]]


def test_group_batches_empty() -> None:
    assert group_batches([], 5) == []


def test_group_batches_order_independent_of_input_order() -> None:
    files = ["b/2.py", "a/1.py", "top.py", "b/1.py", "a/sub/1.py"]
    expected = group_batches(files, 2)
    assert group_batches(list(reversed(files)), 2) == expected
    assert group_batches(sorted(files), 2) == expected
    # directories in order (the root first), each one's files together in path order
    assert expected == [["top.py", "a/1.py"], ["a/sub/1.py"], ["b/1.py", "b/2.py"]]


def _random_tree(rng: random.Random) -> list[str]:
    dirs = ["", "a", "a/b", "a/b/c", "b", "src", "src/pkg", "src/pkg/sub", "z"]
    chosen = rng.sample(dirs, rng.randint(1, len(dirs)))
    files: set[str] = set()
    for directory in chosen:
        for i in range(rng.randint(1, 14)):
            files.add(f"{directory}/f{i}.py" if directory else f"f{i}.py")
    return sorted(files)


def test_group_batches_properties_over_random_inputs() -> None:
    rng = random.Random(20240601)
    for _ in range(500):
        files = _random_tree(rng)
        size = rng.randint(1, 8)
        shuffled = files[:]
        rng.shuffle(shuffled)
        batches = group_batches(shuffled, size)
        flat = [f for b in batches for f in b]
        # every file exactly once
        assert Counter(flat) == Counter(files)
        # batch size respected, no empty batch
        assert all(1 <= len(b) <= size for b in batches)
        # deterministic, independent of input order
        assert group_batches(files, size) == batches
        per_dir = Counter(dirname(f) for f in files)
        for directory, count in per_dir.items():
            holding = [i for i, b in enumerate(batches) if any(dirname(f) == directory for f in b)]
            if count <= size:
                # a directory that fits in one batch is never split across two
                assert len(holding) == 1, (files, size, directory)
            else:
                # a larger directory fills whole batches of its own, bar its remainder
                own = [i for i in holding if all(dirname(f) == directory for f in batches[i])]
                assert len(own) >= count // size, (files, size, directory)
                assert len(holding) == -(-count // size), (files, size, directory)
                full = [i for i in own if len(batches[i]) == size]
                assert len(full) >= count // size


# --- build_plan ----------------------------------------------------------------------------


def test_build_plan_with_find_batches_only_matching_files() -> None:
    contents: dict[str, str | None] = {
        "a/1.py": "print(1)\nprint(2)\n",
        "a/2.py": "x = 1\n",
        "b/1.py": "y\nprint(3)\n",
        "c/1.py": "print(4)\n",
        "d/img.bin": None,
    }
    plan = build_plan(scope_files=sorted(contents), contents=contents, find=[r"print\("],
                      batch_size=2, batches_per_milestone=1)
    assert isinstance(plan, Plan)
    assert plan.targets == {"a/1.py": (1, 2), "b/1.py": (2,), "c/1.py": (1,)}
    assert plan.target_count == 4
    batched = [f for b in plan.batches for f in b.files]
    assert sorted(batched) == ["a/1.py", "b/1.py", "c/1.py"]
    assert "a/2.py" not in batched
    assert plan.unreadable == ("d/img.bin",)
    assert plan.scope_files == tuple(sorted(contents))
    assert sum(b.targets for b in plan.batches) == plan.target_count
    for batch in plan.batches:
        assert batch.targets == sum(len(plan.targets[f]) for f in batch.files)


def test_build_plan_without_find_batches_all_readable_scope_files() -> None:
    contents: dict[str, str | None] = {"a.py": "x\n", "b.py": "", "c.png": None, "d.py": "y\n"}
    plan = build_plan(scope_files=["d.py", "c.png", "b.py", "a.py"], contents=contents, find=[],
                      batch_size=10, batches_per_milestone=4)
    assert plan.batches == (PlannedBatch(number=1, milestone=1, files=("a.py", "b.py", "d.py"),
                                         targets=0),)
    assert plan.targets == {}
    assert plan.target_count == 0
    assert plan.unreadable == ("c.png",)
    assert plan.scope_files == ("a.py", "b.py", "c.png", "d.py")


def test_build_plan_milestones_of_batches_per_milestone() -> None:
    files = [f"d{i}/f.py" for i in range(11)]
    contents: dict[str, str | None] = dict.fromkeys(files, "TODO\n")
    plan = build_plan(scope_files=files, contents=contents, find=["TODO"], batch_size=1,
                      batches_per_milestone=4)
    assert [b.number for b in plan.batches] == list(range(1, 12))
    assert [b.milestone for b in plan.batches] == [1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3]
    assert plan.milestone_count == 3


def test_build_plan_nothing_matches() -> None:
    contents: dict[str, str | None] = {"a.py": "x\n"}
    plan = build_plan(scope_files=["a.py"], contents=contents, find=["TODO"], batch_size=5,
                      batches_per_milestone=4)
    assert plan.batches == ()
    assert plan.milestone_count == 0
    assert plan.target_count == 0


def test_build_plan_is_deterministic() -> None:
    rng = random.Random(7)
    files = _random_tree(rng)
    contents: dict[str, str | None] = {
        f: ("print(1)\n" * rng.randint(0, 3)) if i % 9 else None for i, f in enumerate(files)
    }
    shuffled = dict(sorted(contents.items(), key=lambda _: rng.random()))
    kwargs = {"find": [r"print\("], "batch_size": 3, "batches_per_milestone": 2}
    first = build_plan(scope_files=files, contents=contents, **kwargs)  # type: ignore[arg-type]
    again = build_plan(scope_files=list(reversed(files)), contents=shuffled,
                       **kwargs)  # type: ignore[arg-type]
    assert first == again
    assert first.batches  # the comparison is not vacuous
