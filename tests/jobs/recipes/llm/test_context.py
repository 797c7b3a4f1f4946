"""The request for a batch: everything it must carry, windows for large files, nothing cut silently."""

from __future__ import annotations

import pytest

from jobs.inputs.spec import parse_spec
from jobs.kernel.records import Target
from jobs.recipes.llm.context import (
    ContextTooLargeError,
    build_prompt,
    fit_files,
    gaps,
    render_file,
    windows,
)

SPEC = parse_spec("""```stepwise
recipe: llm
paths: ["src/**/*.py"]
find: ['\\bprint\\(']
instructions: Replace print() with the module logger.
not_doing: ["refactor unrelated code"]
```""")


def big(lines: int, target: int) -> str:
    return "".join("print(1)\n" if n == target else f"x{n} = {n}\n" for n in range(1, lines + 1))


def test_windows_merge_and_gaps_cover_the_rest() -> None:
    assert windows([10, 14, 100], 120, 3) == [(7, 17), (97, 103)]
    assert gaps([(7, 17), (97, 103)], 120) == ((1, 6), (18, 96), (104, 120))
    assert gaps([(1, 5)], 5) == ()


def test_a_windowed_file_marks_every_omitted_range() -> None:
    view = render_file("src/big.py", big(50, 25), [(20, 30)])
    assert view.omitted == ((1, 19), (31, 50))
    assert "[lines 1–19 not shown]" in view.text and "[lines 31–50 not shown]" in view.text
    assert "   25| print(1)" in view.text
    assert "lines 1–19, 31–50 left out" in view.text.splitlines()[0]


def test_whole_files_when_they_fit() -> None:
    views = fit_files({"a.py": "print(1)\n"}, {"a.py": [1]}, 10_000)
    assert views[0].omitted == () and "whole file" in views[0].text


def test_the_largest_file_is_windowed_first_and_windows_narrow_until_it_fits() -> None:
    texts = {"src/small.py": "print(2)\n", "src/big.py": big(3000, 1500)}
    views = fit_files(texts, {"src/small.py": [1], "src/big.py": [1500]}, 4000)
    by_path = {v.path: v for v in views}
    assert by_path["src/small.py"].omitted == ()
    assert by_path["src/big.py"].omitted == ((1, 1459), (1541, 3000))
    assert sum(len(v.text) for v in views) <= 4000


def test_a_file_that_cannot_fit_is_an_error_not_a_cut() -> None:
    with pytest.raises(ContextTooLargeError, match=r"even with src/big\.py") as raised:
        fit_files({"src/big.py": big(3000, 1500)}, {"src/big.py": []}, 4000)
    assert "STEPWISE_LLM_CONTEXT_TOKENS" in raised.value.hint


def test_the_request_carries_goal_rules_instructions_not_doing_targets_and_numbered_files() -> None:
    texts = {"src/a.py": "import x\nprint(1)\n", "src/big.py": big(3000, 1500)}
    prompt = build_prompt(
        goal="Replace print with logging", spec=SPEC, standing=["keep log levels"],
        batch_files=["src/a.py", "src/big.py"], files=["src/a.py", "src/big.py"], texts=texts,
        targets=[Target(path="src/a.py", line=2), Target(path="src/big.py", line=1500)],
        context_tokens=1500, feedback="validation failed: `pytest` exited 1",
    )
    system, user = prompt.messages[0]["content"], prompt.messages[1]["content"]
    for rule in ("Do not edit tests", "Do not add dependencies", "secrets", "CI configuration",
                 "Change only the files of this batch: src/a.py, src/big.py",
                 "Do not create, delete or rename files"):
        assert rule in system
    assert "```diff" in system and "SUMMARY" in system
    for part in ("# Goal\nReplace print with logging", "Replace print() with the module logger.",
                 "- keep log levels", "- refactor unrelated code", "- src/a.py:2: `print(1)`",
                 "- src/big.py:1500: `print(1)`", "    2| print(1)", " 1500| print(1)",
                 "validation failed: `pytest` exited 1"):
        assert part in user, part
    assert "# Left out of this request\n- src/big.py: lines 1–1459, 1541–3000 (of 3000)" in user
    assert prompt.omitted == {"src/big.py": ((1, 1459), (1541, 3000))}


def test_a_single_file_request_says_the_others_are_asked_separately() -> None:
    prompt = build_prompt(goal="g", spec=SPEC, standing=[], batch_files=["a.py", "b.py"],
                          files=["b.py"], texts={"a.py": "print(1)\n", "b.py": "print(2)\n"},
                          targets=[Target(path="b.py", line=1)], context_tokens=1000)
    user = prompt.messages[1]["content"]
    assert "This request covers only: b.py" in user
    assert "## a.py" not in user and "nothing: every file is shown whole" in user
