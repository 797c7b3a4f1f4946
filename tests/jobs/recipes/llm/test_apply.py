"""`git apply --check` on a real repository, and the closest-region feedback for a hunk that misses."""

from __future__ import annotations

from pathlib import Path

from jobs.recipes.llm.apply import apply, check_applies, closest_region, strip_level
from tests.conftest import RepoFactory
from tests.kit.llm import unified

SOURCE = "".join(f"line {n}\n" for n in range(1, 41)).replace("line 20\n", "    total = old(a, b)\n")


def test_a_good_diff_applies(repo_factory: RepoFactory) -> None:
    repo = repo_factory({"m.py": SOURCE})
    diff = unified("m.py", SOURCE, SOURCE.replace("old(", "new("))
    assert check_applies(repo, diff) is None
    apply(repo, diff)
    assert "new(a, b)" in (repo / "m.py").read_text()


def test_a_hunk_that_misses_gets_the_closest_region_and_the_first_difference(
        repo_factory: RepoFactory) -> None:
    repo = repo_factory({"m.py": SOURCE})
    wrong = SOURCE.replace("line 19\n", "line nineteen\n")
    diff = unified("m.py", wrong, wrong.replace("old(", "new("))
    problem = check_applies(repo, diff)
    assert problem is not None and problem.kind == "apply_failed"
    text = problem.message
    assert "Hunk 1 of m.py (`@@ -17,7 +17,7 @@`) does not apply" in text
    assert "closest matching region of the real file is lines 17–23" in text
    assert "   19| line 19" in text and "   20|     total = old(a, b)" in text
    assert "your hunk has `line nineteen` where line 19 of the file is `line 19`" in text
    assert "git apply --check" in text
    assert (repo / "m.py").read_text() == SOURCE  # never applied


def test_whitespace_only_differences_are_named(repo_factory: RepoFactory) -> None:
    repo = repo_factory({"m.py": SOURCE})
    wrong = SOURCE.replace("    total = old(a, b)", "  total = old(a, b)")
    problem = check_applies(repo, unified("m.py", wrong, wrong.replace("old(", "new(")))
    assert problem is not None and "they differ only in whitespace" in problem.message


def test_a_missing_file_is_named(repo_factory: RepoFactory) -> None:
    repo = repo_factory({"m.py": SOURCE})
    problem = check_applies(repo, unified("nope/m.py", SOURCE, SOURCE.replace("old(", "new(")))
    assert problem is not None and "nope/m.py does not exist in the repository" in problem.message


def test_diffs_without_prefixes_apply_at_level_zero(repo_factory: RepoFactory) -> None:
    repo: Path = repo_factory({"m.py": SOURCE})
    diff = unified("m.py", SOURCE, SOURCE.replace("old(", "new(")).replace("a/m.py", "m.py") \
        .replace("b/m.py", "m.py")
    assert strip_level(diff) == 0
    assert check_applies(repo, diff) is None


def test_closest_region_prefers_the_best_match_near_the_stated_line() -> None:
    real = ["a", "b", "c", "x", "a", "b", "c"]
    assert closest_region(["a", "b", "c"], real, near=5)[0] == 4
    assert closest_region(["a", "b", "c"], real, near=1)[0] == 0
