"""Reading model answers: the diff's original text, summaries, and precise parse problems."""

from __future__ import annotations

import pytest

from jobs.recipes.llm.answer import check_structure, diff_paths, parse_problem, read_answer

GOOD = """--- a/pkg/mod.py
+++ b/pkg/mod.py
@@ -1,3 +1,3 @@
 import x

-print(1)
+log.info(1)
"""


def test_the_diff_is_kept_as_written_with_its_summaries() -> None:
    text = f"Sure.\n\n```diff\n{GOOD}```\nSUMMARY pkg/mod.py: print becomes log.info\n"
    answer = read_answer(text)
    assert answer.diff == GOOD
    assert answer.closed
    assert answer.summaries == {"pkg/mod.py": "print becomes log.info"}
    assert parse_problem(GOOD) is None
    assert diff_paths(GOOD) == ["pkg/mod.py"]


def test_summary_lines_tolerate_bullets_backticks_and_prefixes() -> None:
    text = f"```diff\n{GOOD}```\n- SUMMARY `b/pkg/mod.py`: done\n"
    assert read_answer(text).summaries == {"pkg/mod.py": "done"}


def test_a_bare_diff_without_a_fence_is_found() -> None:
    answer = read_answer(f"{GOOD}SUMMARY pkg/mod.py: x\n")
    assert answer.diff == GOOD
    assert answer.closed


def test_no_diff_at_all() -> None:
    assert read_answer("I would rather not.").diff is None


def test_an_unclosed_block_is_reported_as_not_closed() -> None:
    answer = read_answer("```diff\n" + GOOD.split("-print")[0])
    assert answer.diff is not None and not answer.closed
    problem = parse_problem(answer.diff)
    assert problem is not None and problem.cut_short


@pytest.mark.parametrize(("diff", "fragments"), [
    (GOOD.replace("@@ -1,3 +1,3 @@", "@@ -1,5 +1,3 @@"),
     ["ends inside hunk `@@ -1,5 +1,3 @@`", "2 old-file line(s)"]),
    (GOOD.replace("@@ -1,3 +1,3 @@", "@@ -1,2 +1,2 @@"),
     ["line 6 of your diff: `-print(1)`", "more lines than its `@@` header counts"]),
    (GOOD.replace(" import x", "1| import x"),
     ["line 4 of your diff: `1| import x`", "does not fit hunk", "Make the counts"]),
    ("--- a/x.py\n@@ -1 +1 @@\n-a\n+b\n", ["should be the `+++ b/PATH` line"]),
    ("@@ -1 +1 @@\n-a\n+b\n", ["starts a hunk before any"]),
    ("Here it is:\n" + GOOD, ["line 1 of your diff: `Here it is:`", "not part of a unified diff"]),
])
def test_parse_problems_quote_the_offending_line(diff: str, fragments: list[str]) -> None:
    problem = check_structure(diff)
    assert problem is not None
    for fragment in fragments:
        assert fragment in problem.message, problem.message


def test_no_newline_marker_and_empty_context_lines_are_accepted() -> None:
    diff = "--- a/x.py\n+++ b/x.py\n@@ -1,3 +1,3 @@\n a\n\n-b\n\\ No newline at end of file\n+c\n"
    assert parse_problem(diff) is None


def test_deleted_file_paths() -> None:
    diff = "--- a/old.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n"
    assert diff_paths(diff) == ["old.py"]
