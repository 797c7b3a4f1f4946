"""The runners' reports, asked for and read: each runner gets its reporter without losing the
options a repository names; reports are untrusted (hardened XML, caps, no links followed) and
one that cannot be read is "not measured", never a pass."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from jobs.features.evidence.integrity_argv import ReportKind, instrument
from jobs.features.evidence.integrity_hooks import RunReports, load_run
from jobs.features.evidence.integrity_reports import (
    REPORT_BYTES,
    parse_jest_json,
    parse_junit,
    parse_summary,
)
from jobs.kernel.records import CommandEvidence

JUNIT = b"""<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" tests="4">
<testcase classname="tests.test_rect" name="test_area" time="0.001"/>
<testcase classname="tests.test_rect.TestBox" name="test_box[1]" time="0.001"/>
<testcase classname="tests.test_rect" name="test_skipped"><skipped message="slow"/></testcase>
<testcase classname="tests.test_rect" name="test_failed"><failure message="no"/></testcase>
</testsuite></testsuites>"""


@pytest.mark.parametrize(("argv", "expected", "kind"), [
    (["python", "-m", "pytest", "-q"], ["python", "-m", "pytest", "-q", "--junitxml=/r/pytest-0.xml"],
     ReportKind.JUNIT),
    (["pytest", "-q", "--", "tests"], ["pytest", "-q", "--junitxml=/r/pytest-0.xml", "--", "tests"],
     ReportKind.JUNIT),
    (["npx", "jest", "--ci"], ["npx", "jest", "--ci", "--json", "--outputFile=/r/jest-0.json"],
     ReportKind.JEST_JSON),
    (["vitest", "run"], ["vitest", "run", "--reporter=default", "--reporter=json",
                         "--outputFile.json=/r/vitest-0.json"], ReportKind.JEST_JSON),
    (["node", "--test"], ["node", "--test-reporter=spec", "--test-reporter-destination=stdout",
                          "--test-reporter=junit", "--test-reporter-destination=/r/node-0.xml",
                          "--test"], ReportKind.JUNIT),
    (["npm", "test"], ["npm", "test"], None),
    (["python", "-m", "unittest"], ["python", "-m", "unittest"], None),
])
def test_each_runner_is_asked_for_its_report(argv: list[str], expected: list[str],
                                             kind: ReportKind | None) -> None:
    plan = instrument(argv, "/r", 0)
    assert (plan.argv, plan.kind, plan.in_repository) == (expected, kind, False)


@pytest.mark.parametrize(("argv", "report"), [
    (["pytest", "--junitxml=out/junit.xml"], "out/junit.xml"),
    (["pytest", "--junit-xml", "junit.xml"], "junit.xml"),
    (["jest", "--json", "--outputFile=report.json"], "report.json"),
    (["pytest", "--junitxml=/abs/junit.xml"], ""),  # outside the worktree: not read
    (["pytest", "--junitxml=../up.xml"], ""),
    (["pytest", "-p", "no:junitxml"], ""),
    (["vitest", "--reporter=verbose"], ""),
    (["node", "--test", "--test-reporter=tap"], ""),
])
def test_a_command_naming_its_own_reporter_options_keeps_them(argv: list[str],
                                                              report: str) -> None:
    plan = instrument(argv, "/r", 0)
    assert plan.argv == argv  # nothing added: the repository's command runs as it wrote it
    assert plan.report == report and plan.in_repository == bool(report)


def test_junit_xml_is_read_with_test_names() -> None:
    run = parse_junit(JUNIT)
    assert (run.collected, run.passed, run.source, run.measured) == (4, 2, "JUnit XML", True)
    assert run.ids == {"tests/test_rect.py::test_area", "tests/test_rect.py::TestBox::test_box[1]",
                       "tests/test_rect.py::test_skipped", "tests/test_rect.py::test_failed"}
    assert run.passed_ids == {"tests/test_rect.py::test_area",
                              "tests/test_rect.py::TestBox::test_box[1]"}
    assert run.words() == "4 collected, 2 passed"


@pytest.mark.parametrize(("data", "problem"), [
    (b'<?xml version="1.0"?><!DOCTYPE t [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;">]>'
     b"<testsuite><testcase name='&b;'/></testsuite>", "DTDForbidden"),
    (b'<?xml version="1.0"?><!DOCTYPE t [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
     b"<testsuite><testcase name='&x;'/></testsuite>", "DTDForbidden"),
    (b"<testsuite><testcase name='a'>", "ParseError"),
    (b"", "ParseError"),
])
def test_hostile_or_broken_xml_is_not_measured(data: bytes, problem: str) -> None:
    run = parse_junit(data)
    assert not run.measured and run.problem == f"the JUnit XML report could not be read: {problem}"
    assert run.words().startswith("not measured (")


def test_an_oversized_report_is_not_read() -> None:
    big = parse_junit(b" " * (REPORT_BYTES + 1))
    assert big.problem == f"the JUnit XML report is over {REPORT_BYTES:,} bytes"


def test_jest_and_vitest_json_are_read() -> None:
    data = (b'{"numTotalTests": 2, "numPassedTests": 1, "testResults": [{"name": "/r/a.test.js",'
            b' "assertionResults": [{"fullName": "calc adds", "status": "passed"},'
            b' {"fullName": "calc subs", "status": "pending"}]}]}')
    run = parse_jest_json(data)
    assert (run.collected, run.passed) == (2, 1)
    assert run.passed_ids == {"/r/a.test.js::calc adds"}
    assert not parse_jest_json(b'{"numTotalTests": "x"}').measured
    assert not parse_jest_json(b"[1, 2]").measured


@pytest.mark.parametrize(("output", "figures"), [
    ("....s.\n5 passed, 1 skipped in 0.12s\n", (6, 5, "pytest's summary line")),
    ("==== 1 failed, 3 passed, 2 xfailed in 1.02s ====", (6, 3, "pytest's summary line")),
    ("Ran 6 tests in 0.001s\n\nOK (skipped=1)\n", (6, 5, "unittest's summary line")),
    ("Tests:       1 skipped, 5 passed, 6 total\n", (6, 5, "jest's summary line")),
    (" Test Files  1 passed (1)\n      Tests  4 passed | 1 skipped (5)\n", (5, 4,
                                                                         "vitest's summary line")),
    ("# tests 3\n# suites 1\n# pass 3\n# fail 0\n", (3, 3, "node's test runner summary")),
    ("  4 passing (12ms)\n  1 pending\n", (5, 4, "mocha's summary line")),
])
def test_summary_lines_are_the_fallback(output: str, figures: tuple[int, int, str]) -> None:
    run = parse_summary(output)
    assert run is not None and (run.collected, run.passed, run.source) == figures


def test_a_line_that_is_no_runners_summary_is_not_read() -> None:
    assert parse_summary("All checks passed!\n") is None


def evidence(argv: list[str], tail: str = "") -> CommandEvidence:
    return CommandEvidence(argv=argv, exit_code=0, duration_s=0.1, output_tail=tail)


def test_a_report_planted_as_a_link_or_missing_is_never_a_pass(tmp_path: Path) -> None:
    store, worktree = tmp_path / "runs", tmp_path / "wt"
    worktree.mkdir()
    secret = tmp_path / "secret.xml"
    secret.write_bytes(JUNIT)
    reports = RunReports(store, "t1", worktree)
    argv = reports.argv(0, ["pytest", "-q"])
    report = Path(argv[-1].split("=", 1)[1])
    os.symlink(secret, report)  # what a sandboxed command could leave there
    reports.finish([evidence(["pytest", "-q"])])
    run = load_run(store, "t1")
    assert run is not None and run.problem == "`pytest -q` wrote no readable report"
    assert not report.parent.exists()  # the report folder is removed after the run

    reports = RunReports(store, "t2", worktree)
    reports.argv(0, ["pytest", "-q"])
    reports.finish([evidence(["pytest", "-q"], "3 passed in 0.01s")])  # no report: the summary
    run = load_run(store, "t2")
    assert run is not None and (run.collected, run.passed, run.source) == \
        (3, 3, "pytest's summary line")


def test_a_report_the_repository_names_is_read_from_the_worktree_only(tmp_path: Path) -> None:
    store, worktree = tmp_path / "runs", tmp_path / "wt"
    (worktree / "out").mkdir(parents=True)
    (worktree / "out" / "junit.xml").write_bytes(JUNIT)
    reports = RunReports(store, "t3", worktree)
    command = ["pytest", "--junitxml=out/junit.xml"]
    assert reports.argv(0, command) == command
    reports.finish([evidence(command)])
    run = load_run(store, "t3")
    assert run is not None and (run.collected, run.passed) == (4, 2)
