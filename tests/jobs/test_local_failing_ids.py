"""Which tests run again to tell whose a failure is: the failing test ids come from the runner's
machine-readable report (pytest's JUnit XML, jest's and vitest's JSON) with pytest's summary
line as the fallback; reports are untrusted (hardened XML, caps, an id that could be read as an
option runs nothing alone), and a report the repository names itself keeps working. Through the
real `stepwise run` on real repositories validated by pytest, and the readers directly."""

from __future__ import annotations

from pathlib import Path

import pytest

from jobs.decisions.blame import failing_tests, rerun_argv
from jobs.engine.failure_check import examine
from jobs.features.evidence.integrity_reports import FAILED_KEPT, parse_jest_json, parse_junit
from jobs.kernel.records import Attempt, CommandEvidence, FailureCheck
from tests.jobs.test_local_failure_cause import FLAKY_TEST, on_path, run, sample, virtualenv
from tests.kit.local_e2e import config_text, load_job
from tests.kit.repos import commit_all

# No short summary (-rN) and no progress names: only the JUnit XML names the failing test.
QUIET = "python -m pytest -q -rN -p no:cacheprovider"
PYTEST = ["python", "-m", "pytest", "-q", "-rN", "-p", "no:cacheprovider"]


def junit(*cases: str) -> bytes:
    return ("<?xml version='1.0'?><testsuites><testsuite name='pytest'>" + "".join(cases)
            + "</testsuite></testsuites>").encode()


def failed(classname: str, name: str) -> str:
    return f"<testcase classname='{classname}' name='{name}'><failure message='no'/></testcase>"


def test_the_junit_report_names_the_failing_tests_in_order() -> None:
    report = parse_junit(junit(
        "<testcase classname='tests.test_a' name='test_ok'/>",
        failed("tests.test_a.TestOuter.TestInner", "test_deep[x-1]"),
        "<testcase classname='tests.test_a' name='test_skip'><skipped/></testcase>",
        "<testcase classname='tests.test_b' name='test_err'><error message='boom'/></testcase>"))
    # Failed and in error, not skipped; nested classes as pytest's node ids write them.
    assert report.failed_ids == ("tests/test_a.py::TestOuter::TestInner::test_deep[x-1]",
                                 "tests/test_b.py::test_err")


def test_jest_and_vitest_json_name_the_failing_tests() -> None:
    document = (b'{"numTotalTests": 2, "numPassedTests": 1, "testResults": [{"name": '
                b'"/repo/src/sum.test.js", "assertionResults": [{"fullName": "sum adds", '
                b'"status": "passed"}, {"fullName": "sum carries", "status": "failed"}]}]}')
    assert parse_jest_json(document).failed_ids == ("/repo/src/sum.test.js::sum carries",)


def test_more_failing_tests_than_kept_name_none() -> None:
    """A list cut at the cap would run fewer tests than failed: then none is named."""
    cases = [failed("tests.test_a", f"test_{n}") for n in range(FAILED_KEPT + 1)]
    assert parse_junit(junit(*cases)).failed_ids == ()
    assert len(parse_junit(junit(*cases[:FAILED_KEPT])).failed_ids) == FAILED_KEPT


@pytest.mark.parametrize("data", [
    b'<?xml version="1.0"?><!DOCTYPE t [<!ENTITY a "aaaa"><!ENTITY b "&a;&a;&a;">]>'
    b"<testsuite><testcase classname='tests.test_a' name='&b;'><failure/></testcase>"
    b"</testsuite>",
    b"<testsuite><testcase classname='tests.test_a' name='t'><failure/>",  # cut short
])
def test_an_unreadable_report_names_no_test(data: bytes) -> None:
    report = parse_junit(data)
    assert not report.measured and report.failed_ids == ()


def evidence(output: str = "", *, failed_tests: list[str] | None = None,
             argv: list[str] | None = None) -> CommandEvidence:
    return CommandEvidence(argv=argv or PYTEST, exit_code=1, duration_s=1.0, output_tail=output,
                           failed_tests=failed_tests or [])


def test_the_report_comes_first_and_the_summary_is_the_fallback() -> None:
    summary = "FAILED tests/test_a.py::test_x - AssertionError\n1 failed, 3 passed in 0.1s"
    assert failing_tests(evidence(summary)) == ["tests/test_a.py::test_x"]
    assert failing_tests(evidence(summary, failed_tests=["tests/test_b.py::test_y"])) == \
        ["tests/test_b.py::test_y"]
    # jest's ids are named (the re-run is its whole command: its name filter passes when it
    # matches nothing).
    jest = evidence(failed_tests=["src/sum.test.js::sum carries"], argv=["npx", "jest"])
    assert failing_tests(jest) == ["src/sum.test.js::sum carries"]
    assert rerun_argv(jest.argv, failing_tests(jest)) == ["npx", "jest"]


@pytest.mark.parametrize("bad", ["--rootdir=/", "-p evil", "/etc/passwd::t",
                                 "../outside.py::t", "tests/a.py::t\nx"])
def test_an_id_that_is_not_a_plain_test_id_makes_the_whole_command_run_again(bad: str) -> None:
    command = evidence(failed_tests=["tests/test_a.py::test_ok", bad])
    assert failing_tests(command) == []
    assert rerun_argv(command.argv, failing_tests(command)) == PYTEST


def test_an_id_whose_file_is_not_there_or_that_runs_nothing_blames_nobody_else() -> None:
    command = evidence(failed_tests=["pkg.checks::test_x"])  # a classname pytest cannot take
    ran: list[list[str]] = []

    def here(argv: list[str]) -> CommandEvidence:
        ran.append(argv)
        return CommandEvidence(argv=argv, exit_code=1, duration_s=1.0)

    def parent(argv: list[str]) -> CommandEvidence:
        ran.append(argv)
        return CommandEvidence(argv=argv, exit_code=0, duration_s=1.0)
    check = examine(command, parent="p", run_here=here, run_on_parent=parent,
                    present=lambda path: False)
    assert ran == [PYTEST, PYTEST] and check.cause == "edit"  # the whole command, twice
    assert check.tests == ["pkg.checks::test_x"]  # still named
    ran.clear()

    def nothing(argv: list[str]) -> CommandEvidence:  # pytest: "not found", exit 4
        ran.append(argv)
        return CommandEvidence(argv=argv, exit_code=4, duration_s=1.0)
    check = examine(evidence(failed_tests=["tests/test_a.py::test_gone"]), parent="p",
                    run_here=nothing, run_on_parent=nothing)
    # The ids ran no test: not "pre-existing" because the parent could not run them either.
    assert ran == [[*PYTEST, "tests/test_a.py::test_gone"]] and check.cause == "edit"


def flaky_attempt(tmp_path: Path, validate: str) -> tuple[Attempt, FailureCheck]:
    """A job over a repository with a test that fails once then passes, validated by
    `validate`: its first batch's first attempt, committed, and its examined failure."""
    venv = virtualenv(tmp_path / "venv", with_pytest=True)
    repo = sample(tmp_path / "repo", extra={"tests/test_flaky.py": FLAKY_TEST})
    (repo / ".github" / "stepwise.yml").write_text(config_text(validate=[validate],
                                                               allow_commands=["python"]))
    commit_all(repo, "its validation")
    done = run(repo, 1, on_path(venv))
    assert done.code == 0, done.text
    attempt = load_job(repo, 1).batches[0].attempts[0]
    check = attempt.failure_check
    assert check is not None and check.cause == "flaky"
    return attempt, check


def test_a_flaky_test_found_only_in_the_junit_report_is_run_again_alone(tmp_path: Path) -> None:
    attempt, check = flaky_attempt(tmp_path, QUIET)
    assert attempt.commands[0].failed_tests == ["tests/test_flaky.py::test_sometimes"]
    assert "FAILED" not in attempt.commands[0].output_tail  # the summary named nothing
    assert [(c.argv, c.exit_code) for c in check.reruns] == [
        ([*PYTEST, "tests/test_flaky.py::test_sometimes"], 0)]


def test_a_report_the_repository_names_keeps_working(tmp_path: Path) -> None:
    """`--junitxml` in the repository's own command: it runs as written (its report where it
    says), and the failing ids come from the summary line, the fallback."""
    own = "python -m pytest -q -p no:cacheprovider --junitxml=reports/junit.xml"
    attempt, check = flaky_attempt(tmp_path, own)
    assert attempt.commands[0].argv == own.split()  # as written, nothing added
    assert attempt.commands[0].failed_tests == []  # not from a report it names itself
    assert check.tests == ["tests/test_flaky.py::test_sometimes"]  # from the summary
    assert check.reruns[0].argv == [*own.split(), "tests/test_flaky.py::test_sometimes"]
