"""Annotations read from real tool output formats (pytest, ruff old and new, mypy, tsc, gcc)."""

from __future__ import annotations

from jobs.notes.annotations import MAX_ANNOTATIONS, Annotation, annotations_from_output

FILES = {"src/app.py", "tests/test_app.py", "web/index.ts", "lib/x.c"}
ROOT = "/tmp/stepwise/repo"


def read(text: str) -> list[Annotation]:
    return annotations_from_output(text, is_repo_file=FILES.__contains__, roots=[ROOT])


PYTEST = """\
============================= test session starts ==============================
collected 2 items

tests/test_app.py .F                                                     [100%]

=================================== FAILURES ===================================
___________________________________ test_two ___________________________________

    def test_two():
>       assert add(1, 1) == 3
E       assert 2 == 3
E        +  where 2 = add(1, 1)

tests/test_app.py:7: AssertionError
=========================== short test summary info ============================
FAILED tests/test_app.py::test_two - assert 2 == 3
========================= 1 failed, 1 passed in 0.02s =========================
"""


def test_pytest_failure_points_at_the_assert_with_its_explanation() -> None:
    assert read(PYTEST) == [Annotation(
        "tests/test_app.py", 7, "AssertionError: assert 2 == 3 / +  where 2 = add(1, 1)")]


def test_ruff_concise_and_full_formats() -> None:
    old = "src/app.py:3:8: F401 [*] `os` imported but unused\nFound 1 error.\n"
    new = ("F401 [*] `os` imported but unused\n --> src/app.py:3:8\n  |\n3 | import os\n"
           "  |        ^^\n")
    expected = [Annotation("src/app.py", 3, "F401 [*] `os` imported but unused")]
    assert read(old) == expected
    assert read(new) == expected


def test_mypy_levels() -> None:
    out = ("src/app.py:12: error: Incompatible return value type (got \"int\", expected "
           "\"str\")  [return-value]\nsrc/app.py:12: note: See the docs\n"
           "Found 1 error in 1 file (checked 3 source files)\n")
    found = read(out)
    assert [(a.line, a.level) for a in found] == [(12, "failure"), (12, "notice")]
    assert found[0].message.startswith("Incompatible return value type")


def test_tsc_both_formats() -> None:
    out = ("web/index.ts(4,7): error TS2322: Type 'number' is not assignable to type 'string'.\n"
           "web/index.ts:9:1 - error TS2304: Cannot find name 'foo'.\n")
    assert [(a.path, a.line, a.message[:6]) for a in read(out)] == [
        ("web/index.ts", 4, "TS2322"), ("web/index.ts", 9, "TS2304")]


def test_absolute_paths_under_the_root_become_relative_and_others_are_dropped() -> None:
    out = (f"{ROOT}/lib/x.c:10:5: error: expected ';' before '}}' token\n"
           "/usr/include/stdio.h:20:1: note: declared here\n"
           "lib/unknown.c:3:1: error: not a repository file\n"
           "./src/app.py:2: SyntaxError: invalid syntax\n")
    assert [(a.path, a.line) for a in read(out)] == [("lib/x.c", 10), ("src/app.py", 2)]


def test_duplicates_are_dropped_and_the_count_is_capped() -> None:
    line = "src/app.py:1:1: E501 line too long\n"
    assert len(read(line * 3)) == 1
    many = "".join(f"src/app.py:{n}:1: E501 line too long\n" for n in range(1, 1200))
    assert len(read(many)) == MAX_ANNOTATIONS == 1000


def test_text_without_locations_gives_nothing() -> None:
    assert read("Traceback (most recent call last):\n  boom\nValueError: x\n") == []
    assert read("") == []
    assert read("src/app.py:0: zero is not a line\n") == []
