"""Whose failure is it: the edit's, or one the edit did not cause. One home for the decision
(the runs it needs are jobs/engine/failure_check.py; what the gate says of it is `blame_words`,
the evidence line of the gate, check run and note `cause_line`: jobs/features/evidence).

When a batch fails validation, only the failing tests are run again, at most twice: once on the
batch's tree, once on its parent's (the job's head before the batch). The failing tests are
those the runner's machine-readable report named (pytest's JUnit XML, jest's and vitest's JSON,
node's JUnit: `CommandEvidence.failed_tests`, read by jobs/features/evidence), else those
pytest's short summary names; pytest runs only them again, other runners (whose name filters
pass when they match nothing) run the whole failing command again, and so does pytest when no
complete list of plain test ids is known.
- passes on the re-run: **flaky**, named, not counted toward the failure pause, kept in the
  record and listed in the note; the batch goes on;
- fails on the parent too: not the edit's: **environment** when it failed the way a changed
  environment does (exit 127, a module or command not found; no re-run on the batch for
  those), else **pre-existing**; the edit is not blamed and the gate says so;
- otherwise: the **edit**'s.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from enum import StrEnum
from pathlib import PurePath

from jobs.basics import markdown_safe as md
from jobs.kernel.records import NOT_THE_EDIT_CODES, CommandEvidence


class Cause(StrEnum):
    EDIT = "edit"
    FLAKY = "flaky"
    PRE_EXISTING = "pre_existing"
    ENVIRONMENT = "environment"


# The error codes of failures that are not the edit's (the `failure` gate opens at once; a
# split never starts for them: every subset of the batch would fail the same way).
NOT_THE_EDITS = {Cause(cause): code for cause, code in NOT_THE_EDIT_CODES.items()}

ENVIRONMENT_SIGNS = ("No module named", "ModuleNotFoundError", "command not found",
                     "bwrap: execvp", "cannot execute", "Cannot find module")


def looks_environmental(command: CommandEvidence) -> bool:
    """A failure the way a changed environment fails: the program or a module is missing."""
    return command.exit_code in (126, 127) or any(
        sign in command.output_tail for sign in ENVIRONMENT_SIGNS)


_SUMMARY = re.compile(r"^(?:FAILED|ERROR) (.+?)(?: - .*)?$", re.MULTILINE)
_COUNTS = re.compile(r"(\d+) (failed|errors?)\b")
# pytest options that take a value as the next argument (kept with it on a re-run).
_VALUED = frozenset({
    "-k", "-m", "-c", "-p", "-o", "-W", "-r", "-n", "--rootdir", "--deselect", "--ignore",
    "--ignore-glob", "--confcutdir", "--basetemp", "--maxfail", "--junitxml", "--junit-xml",
    "--cov", "--cov-report", "--cov-config", "--tb", "--durations", "--log-level",
    "--import-mode", "--override-ini", "--config-file", "--capture", "--dist", "--timeout",
    "--log-file", "--log-cli-level", "--pyargs", "--cache-dir",
})


def _pytest_start(argv: Sequence[str]) -> int | None:
    """Where pytest's own arguments start in `argv`, or None when it does not run pytest."""
    name = PurePath(argv[0]).name if argv else ""
    if name in ("pytest", "py.test"):
        return 1
    if name.startswith("python") and list(argv[1:3]) == ["-m", "pytest"]:
        return 3
    return None


def failing_tests(command: CommandEvidence) -> list[str]:
    """The ids of the tests that failed: those the runner's machine-readable report named
    (`failed_tests`, any runner), else those pytest's short summary names as failed or in error
    when it names every one its counts report (a summary cut off by the tail names fewer: then
    none). None either when an id is not a plain test id (it could be read as an option)."""
    found = list(command.failed_tests)
    if not found and _pytest_start(command.argv) is not None:
        output = command.output_tail
        named = list(dict.fromkeys(m.group(1).strip() for m in _SUMMARY.finditer(output)))
        counted = sum(int(n) for n, _ in _COUNTS.findall(output.strip().splitlines()[-1])) \
            if output.strip() else 0
        found = named if named and counted == len(named) else []
    return found if all(plain_test_id(test) for test in found) else []


def plain_test_id(test: str) -> bool:
    """A test id that is only that on a command line: not an option, no control character, its
    path relative and inside the worktree (ids come from the repository's own report)."""
    path = test.split("::", 1)[0]
    return bool(test) and not test.startswith("-") and test.isprintable() and \
        not path.startswith("/") and ".." not in PurePath(path).parts


def narrows(argv: Sequence[str], tests: Sequence[str]) -> bool:
    """Whether a re-run of `argv` runs only `tests` (pytest, given the ids)."""
    return _pytest_start(argv) is not None and bool(tests)


# pytest's exit codes when it ran no test: usage error (an id it cannot find), none collected.
NO_TESTS_RAN = (4, 5)


def rerun_argv(argv: Sequence[str], tests: Sequence[str]) -> list[str]:
    """The command that runs only `tests` again: pytest's options kept, its paths replaced
    by the test ids; with no ids, or another runner, the command itself."""
    start = _pytest_start(argv)
    if start is None or not narrows(argv, tests):
        return list(argv)
    kept = list(argv[:start])
    args = list(argv[start:])
    index = 0
    while index < len(args):
        arg = args[index]
        if arg == "--":
            break
        if arg.startswith("-"):
            kept.append(arg)
            if arg in _VALUED and index + 1 < len(args):
                kept.append(args[index + 1])
                index += 1
        index += 1
    return [*kept, *tests]


def decide(first: CommandEvidence, on_batch: CommandEvidence | None,
           on_parent: CommandEvidence | None) -> Cause:
    """The cause from the first failure and the re-runs made (None: not run)."""
    if on_batch is not None and on_batch.exit_code == 0 and not on_batch.timed_out:
        return Cause.FLAKY
    if on_parent is None or on_parent.exit_code == 0:
        return Cause.EDIT
    return Cause.ENVIRONMENT if looks_environmental(first) or looks_environmental(on_parent) \
        else Cause.PRE_EXISTING


def _named(tests: Sequence[str], command: str) -> str:
    if not tests:
        return md.code(command)
    shown = ", ".join(md.code(t) for t in tests[:5])
    more = f" and {len(tests) - 5} more" if len(tests) > 5 else ""
    return shown + more


def blame_words(cause: Cause, *, batch: int, command: str, tests: Sequence[str], parent: str,
                baseline_from: str = "") -> str:
    """What the gate says of a failure that is not the edit's (the batch, what failed where)."""
    what = _named(tests, command)
    if cause is Cause.ENVIRONMENT:
        since = f" (the baseline reused from {baseline_from} passed, so it was run again)" \
            if baseline_from else ""
        return (f"batch {batch} failed, but not because of its edit: the environment changed: "
                f"{what} fails the same way on the parent commit {parent[:7]}, without the "
                f"batch's edit{since}")
    return (f"batch {batch} failed, but not because of its edit: {what} fails on the parent "
            f"commit {parent[:7]} too, without the batch's edit (a pre-existing failure)")


def blame_hint(cause: Cause) -> str:
    if cause is Cause.ENVIRONMENT:
        return ("fix the environment the commands run in (a program or module missing: the "
                "virtualenv or PATH of the shell that runs stepwise, or `setup`), then retry "
                "the batch")
    return "fix the failing tests on the base (or the flaky test), then retry the batch"


def cause_line(cause: Cause, *, command: str, tests: Sequence[str], parent: str) -> str:
    """The evidence line of an examined failure (the gate's, the check run's and the note's)."""
    what = _named(tests, command)
    if cause is Cause.FLAKY:
        return f"{what} failed, then passed when run again: flaky, not counted as a failure"
    if cause is Cause.ENVIRONMENT:
        return (f"{what} fails the same way on the parent commit {parent[:7]}: the environment "
                "changed, not the edit")
    if cause is Cause.PRE_EXISTING:
        return f"{what} fails on the parent commit {parent[:7]} too: a pre-existing failure"
    return (f"{what} failed again when run again and passes on the parent commit "
            f"{parent[:7]}: the edit's")
