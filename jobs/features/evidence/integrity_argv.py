"""A validation command with the test runner's machine-readable report asked for (pure): pytest
gets `--junitxml`, jest `--json --outputFile`, vitest a `json` reporter beside its default one,
node's test runner a `junit` reporter beside `spec`, each writing into the run's report folder.
A command that names its own reporter options keeps them untouched (a report path it names in
the repository is read from there); a command that is not a known runner (`npm test`, `make`)
runs as it is, and its summary line is read instead (integrity_reports.py `parse_summary`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import PurePosixPath


class ReportKind(StrEnum):
    JUNIT = "junit"
    JEST_JSON = "jest"


@dataclass(frozen=True)
class Instrumented:
    """The argv to run and where its report will be: `report` is a path in the run's report
    folder, or (`in_repository`) a path relative to the worktree that the command names."""

    argv: list[str]
    kind: ReportKind | None = None
    report: str = ""
    in_repository: bool = False
    runner: str = ""  # pytest, jest, vitest or node ('' another command)


def _runner(argv: list[str]) -> tuple[str, int]:
    """The runner a command starts and the index of its first own argument."""
    if not argv:
        return "", 0
    first = PurePosixPath(argv[0]).name
    if first in ("npx", "pnpx", "bunx") and len(argv) > 1:
        name, start = _runner(argv[1:])
        return name, start + 1
    if first.startswith("python") and argv[1:3] == ["-m", "pytest"]:
        return "pytest", 3
    if first in ("pytest", "py.test"):
        return "pytest", 1
    if first in ("jest", "vitest"):
        return first, 1
    if first == "node" and "--test" in argv:
        return "node", 1
    return "", 0


def _option_value(argv: list[str], names: tuple[str, ...]) -> str | None:
    """The value of the first of `names` in `argv` (`--x=v` or `--x v`), "" when it has none."""
    for index, arg in enumerate(argv):
        for name in names:
            if arg.startswith(f"{name}="):
                return arg.split("=", 1)[1]
            if arg == name:
                return argv[index + 1] if index + 1 < len(argv) else ""
    return None


def _relative(path: str | None) -> str | None:
    if not path or path.startswith("/") or ".." in PurePosixPath(path).parts:
        return None
    return path


def _insert(argv: list[str], extra: list[str]) -> list[str]:
    """`extra` before a `--` that ends the options, else at the end."""
    if "--" in argv:
        at = argv.index("--")
        return [*argv[:at], *extra, *argv[at:]]
    return [*argv, *extra]


def instrument(argv: list[str], folder: str, index: int) -> Instrumented:
    """`argv` asking its runner for a report in `folder` (the `index`-th command of the run)."""
    runner = _runner(argv)[0]
    return replace(_instrumented(argv, folder, index), runner=runner)


def _instrumented(argv: list[str], folder: str, index: int) -> Instrumented:
    runner, start = _runner(argv)
    own = argv[start:]
    if runner == "pytest":
        if any(arg.endswith("no:junitxml") for arg in own):
            return Instrumented(argv)  # the repository turned the plugin off
        named = _option_value(own, ("--junitxml", "--junit-xml"))
        if named is not None:
            path = _relative(named)
            return Instrumented(argv, ReportKind.JUNIT, path, True) if path \
                else Instrumented(argv)
        report = f"{folder}/pytest-{index}.xml"
        return Instrumented(_insert(argv, [f"--junitxml={report}"]), ReportKind.JUNIT, report)
    if runner == "jest":
        if "--json" in own or _option_value(own, ("--outputFile",)) is not None:
            path = _relative(_option_value(own, ("--outputFile",)))
            return Instrumented(argv, ReportKind.JEST_JSON, path, True) if path and \
                "--json" in own else Instrumented(argv)
        report = f"{folder}/jest-{index}.json"
        return Instrumented([*argv, "--json", f"--outputFile={report}"], ReportKind.JEST_JSON,
                            report)
    if runner == "vitest":
        if any(arg.startswith(("--reporter", "--outputFile")) for arg in own):
            return Instrumented(argv)
        report = f"{folder}/vitest-{index}.json"
        return Instrumented([*argv, "--reporter=default", "--reporter=json",
                             f"--outputFile.json={report}"], ReportKind.JEST_JSON, report)
    if runner == "node":
        if any(arg.startswith("--test-reporter") for arg in argv):
            return Instrumented(argv)
        report = f"{folder}/node-{index}.xml"
        extra = ["--test-reporter=spec", "--test-reporter-destination=stdout",
                 "--test-reporter=junit", f"--test-reporter-destination={report}"]
        return Instrumented([argv[0], *extra, *argv[1:]], ReportKind.JUNIT, report)
    return Instrumented(argv)
