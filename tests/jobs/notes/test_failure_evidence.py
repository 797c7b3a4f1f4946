"""Failure evidence that names the failure: the output tail around the failing test's report
(real runner output shapes), findings read from the common linter formats into leftovers, and
findings with backticks kept intact in the note's Markdown."""

from __future__ import annotations

import pytest

from jobs.basics.markdown_safe import code
from jobs.notes.annotations import choose_tail
from jobs.notes.note_parts import codemod_findings

LIMIT = 40
NOISE = [f"noise line {i}" for i in range(80)]

COVERAGE = ["---------- coverage: platform linux, python 3.11.9-final-0 ----------",
            "Name                      Stmts   Miss  Cover",
            "---------------------------------------------",
            *[f"src/tablib/formats/_f{i}.py      120     10    92%" for i in range(60)],
            "---------------------------------------------",
            "TOTAL                      7200    600    92%"]
PYTEST = ["============================= test session starts ==============================",
          *[f"tests/test_m{i}.py ........" for i in range(30)],
          "=================================== FAILURES ===================================",
          "_________________________ test_csv_export_keeps_order __________________________",
          "    def test_csv_export_keeps_order():",
          ">       assert export() == 'a,b'",
          "E       AssertionError: assert 'b,a' == 'a,b'",
          "tests/test_csv.py:12: AssertionError",
          *COVERAGE,
          "=========================== short test summary info ============================",
          "FAILED tests/test_csv.py::test_csv_export_keeps_order - AssertionError: assert",
          "==================== 1 failed, 240 passed in 12.31s ===================="]
UNITTEST = ["." * 70, "=" * 70, "FAIL: test_total (tests.test_calc.CalcTests.test_total)",
            "-" * 70, "Traceback (most recent call last):",
            '  File "/tmp/stepwise/repo/tests/test_calc.py", line 9, in test_total',
            "AssertionError: 11 != 10", *NOISE, "-" * 70, "Ran 7 tests in 0.003s", "",
            "FAILED (failures=1)"]
MOCHA = [*[f"    ✓ route {i}" for i in range(60)], "", "  212 passing (2s)", "  1 failing", "",
         "  1) app.router", "       should throw on bad input:", "     AssertionError: expected",
         *NOISE]
JEST = ["PASS src/a.test.js", "FAIL src/slug.test.js",
        "  ● slugify › strips accents", "", "    expect(received).toBe(expected)",
        *NOISE, "Tests:       1 failed, 41 passed, 42 total"]
AVA = [*[f"  ✔ case {i}" for i in range(60)], "  ✘ [fail]: decamelize › handles acronyms",
       "    Difference (- actual, + expected):", *NOISE, "  1 test failed"]
GO = ["=== RUN   TestParse", "--- FAIL: TestParse (0.00s)", "    parse_test.go:14: got 2, want 3",
      *NOISE, "FAIL", "FAIL\texample.com/parse\t0.004s"]
CARGO = [*[f"test t{i} ... ok" for i in range(60)], "failures:", "",
         "---- parse::tests::rejects_empty stdout ----",
         "thread 'parse::tests::rejects_empty' panicked at src/parse.rs:40:9:", *NOISE,
         "test result: FAILED. 60 passed; 1 failed; 0 ignored"]


@pytest.mark.parametrize(("output", "must_keep"), [
    (PYTEST, ["E       AssertionError: assert 'b,a' == 'a,b'", "tests/test_csv.py:12",
              "1 failed, 240 passed"]),
    (UNITTEST, ["FAIL: test_total", "AssertionError: 11 != 10", "FAILED (failures=1)"]),
    (MOCHA, ["1 failing", "should throw on bad input", "AssertionError: expected"]),
    (JEST, ["● slugify › strips accents", "expect(received)", "1 failed, 41 passed"]),
    (AVA, ["✘ [fail]: decamelize › handles acronyms", "1 test failed"]),
    (GO, ["--- FAIL: TestParse", "parse_test.go:14: got 2, want 3", "example.com/parse"]),
    (CARGO, ["failures:", "panicked at src/parse.rs:40:9", "1 failed"]),
])
def test_the_tail_keeps_the_failing_tests_report_and_the_counts(output: list[str],
                                                                 must_keep: list[str]) -> None:
    plain = "\n".join(output[-LIMIT:])
    assert not all(words in plain for words in must_keep)  # the last lines alone lose it
    tail = choose_tail(output, limit=LIMIT)
    assert len(tail) <= LIMIT + 1
    text = "\n".join(tail)
    for words in must_keep:
        assert words in text, words
    assert "lines left out" in text


def test_a_short_or_reportless_output_keeps_its_last_lines() -> None:
    assert choose_tail(["a", "b"], limit=LIMIT) == ["a", "b"]
    assert choose_tail(NOISE, limit=LIMIT) == NOISE[-LIMIT:]


ROOT = "/tmp/stepwise/repo"
FILES = ["lib/router.js", "lib/view.js", "src/tablib/core.py", "src/app.ts"]


@pytest.mark.parametrize(("output", "expected"), [
    ("src/tablib/core.py:12:8: F401 [*] `os` imported but unused\nFound 1 error.\n",  # ruff concise
     ["src/tablib/core.py:12 — F401 [*] `os` imported but unused"]),
    ("F401 [*] `os` imported but unused\n  --> src/tablib/core.py:12:8\n   |\n"  # ruff full
     "12 | import os\n   |        ^^\n   |\nhelp: Remove unused import: `os`\n",
     ["src/tablib/core.py:12 — F401 [*] `os` imported but unused"]),
    (f"\n{ROOT}/lib/router.js\n  12:5  error  Unexpected var, use let or const instead  no-var\n"
     "  30:1  warning  Unexpected console statement  no-console\n\n"
     f"{ROOT}/lib/view.js\n  3:3  error  Unexpected var, use let or const instead  no-var\n\n"
     "✖ 3 problems (2 errors, 1 warning)\n",  # eslint stylish, absolute sandbox paths
     ["lib/router.js:12 — Unexpected var, use let or const instead (no-var)",
      "lib/router.js:30 — Unexpected console statement (no-console)",
      "lib/view.js:3 — Unexpected var, use let or const instead (no-var)"]),
    (f"{ROOT}/lib/router.js:12:5: Unexpected var, use let or const instead. [Error/no-var]\n"
     "\n1 problem\n",  # eslint unix
     ["lib/router.js:12 — Unexpected var, use let or const instead. [Error/no-var]"]),
    ("src/app.ts(4,7): error TS2322: Type 'string' is not assignable to type 'number'.\n",
     ["src/app.ts:4 — TS2322: Type 'string' is not assignable to type 'number'."]),
    ("src/app.ts:4:7 - error TS2322: Type 'string' is not assignable to type 'number'.\n",
     ["src/app.ts:4 — TS2322: Type 'string' is not assignable to type 'number'."]),
    ("src/tablib/core.py:40: error: Incompatible return value type (got \"int\", expected "
     "\"str\")  [return-value]\nFound 1 error in 1 file (checked 3 source files)\n",  # mypy
     ["src/tablib/core.py:40 — Incompatible return value type (got \"int\", expected \"str\")"
      "  [return-value]"]),
    ("./src/tablib/core.py:7:80: E501 line too long (88 > 79 characters)\n",  # flake8
     ["src/tablib/core.py:7 — E501 line too long (88 > 79 characters)"]),
    ("elsewhere/other.py:3:1: E302 expected 2 blank lines\n", []),  # not a batch file
])
def test_findings_in_the_common_formats_become_leftovers(output: str,
                                                         expected: list[str]) -> None:
    assert codemod_findings(output, FILES, roots=(ROOT,)) == expected


@pytest.mark.parametrize(("text", "span"), [
    ("a.py:3 — plain", "`a.py:3 — plain`"),
    ("a.py:3 — F401 `os` imported", "``a.py:3 — F401 `os` imported``"),
    ("x ``double`` y", "```x ``double`` y```"),
    ("`starts", "`` `starts ``"),
])
def test_code_spans_hold_any_backticks(text: str, span: str) -> None:
    assert code(text) == span


def test_commands_keep_their_quoting_so_they_can_be_pasted_back() -> None:
    from jobs.kernel.records import CommandEvidence
    from jobs.notes.note_parts import command_line

    evidence = CommandEvidence(argv=["eslint", "--fix", "--rule", "no-var: error", "lib/a.js"],
                               exit_code=1, duration_s=0.5)
    assert evidence.display == "eslint --fix --rule 'no-var: error' lib/a.js"
    assert command_line(evidence) == "`eslint --fix --rule 'no-var: error' lib/a.js` → exit 1"
