"""Reading a failing command's output (pure): which of its lines to keep as its tail, and the
file-and-line annotations in it.

The tail is the failing test's report rather than whatever came last (a coverage table, a timing
summary). Anchors, in the order test runners print them: pytest's `FAILURES`/`ERRORS` section
(before pytest-cov's coverage table), unittest's `FAIL:`/`ERROR:` blocks, mocha's `N failing`,
jest's `●` blocks, ava's `✘`, go test's `--- FAIL:`, cargo test's `failures:`. The tail is the
report from its first anchor, a marker of what was left out, and the output's last lines (the
counts).

Annotations recognised: pytest (`path:line: Error` after its `E ...` lines), ruff
(`path:line:col: CODE msg`, and the newer `CODE msg` + ` --> path:line:col`), mypy
(`path:line: error: msg  [code]`), tsc (`path(line,col): error TSxxxx: msg` and
`path:line:col - error TSxxxx: msg`), eslint's `stylish` format (a file's path on its own line,
then `  line:col  error  message  rule`), and the generic `path:line[:col]: message` of
compilers, flake8 and eslint's `unix` format. Only paths that name a file of the repository are
kept (absolute paths under the sandbox's repository root are made relative), so an annotation
always points at something a reviewer can open.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from jobs.basics.github_limits import ANNOTATIONS_PER_RUN

END_LINES = 6  # the last lines are always kept: the runner's counts ("1 failed, 20 passed")

_ANCHORS = re.compile(
    r"^(?:"
    r"=+ (?:FAILURES|ERRORS) =+"  # pytest
    r"|(?:FAIL|ERROR): \S.*"  # unittest
    r"|\s*\d+ failing\b.*"  # mocha
    r"|\s*● (?!Console\b).+"  # jest (not its console.log blocks)
    r"|\s*✘ .+"  # ava
    r"|\s*--- FAIL: .+"  # go test
    r"|failures:\s*"  # cargo test
    r")$")


def left_out_marker(count: int) -> str:
    return f"… {count} line{'' if count == 1 else 's'} left out …"


def choose_tail(lines: list[str], *, limit: int) -> list[str]:
    """At most `limit` lines (+1 marker) of `lines`: from the first failure report on, then the
    last END_LINES; the plain last `limit` lines when no report is found or all fits."""
    if len(lines) <= limit:
        return lines
    anchor = next((i for i, line in enumerate(lines) if _ANCHORS.match(line)), None)
    if anchor is None or anchor >= len(lines) - limit:
        return lines[-limit:]
    head = lines[anchor : anchor + limit - END_LINES]
    end = lines[-END_LINES:]
    skipped = len(lines) - END_LINES - (anchor + len(head))
    return head + ([left_out_marker(skipped)] if skipped > 0 else []) + end


MAX_ANNOTATIONS = ANNOTATIONS_PER_RUN  # sent 50 a request (bot/github/check_run_publish.py)
MESSAGE_CHARS = 400

_PATH = r"(?P<path>[^\s:()'\"<>|]+?\.[A-Za-z0-9_]+)"
_TSC_PAREN = re.compile(_PATH + r"\((?P<line>\d+),(?P<col>\d+)\): (?P<level>error|warning) "
                        r"(?P<msg>TS\d+: .*)")
_TSC_PRETTY = re.compile(_PATH + r":(?P<line>\d+):(?P<col>\d+) - (?P<level>error|warning) "
                         r"(?P<msg>TS\d+: .*)")
_MYPY = re.compile(_PATH + r":(?P<line>\d+)(?::\d+)?: (?P<level>error|note|warning): (?P<msg>.*)")
_RUFF_ARROW = re.compile(r"^\s*-->\s*" + _PATH + r":(?P<line>\d+):(?P<col>\d+)")
_RUFF_CODE = re.compile(r"^(?P<msg>[A-Z]{1,4}\d{2,4}\b.*)$")
_PYTEST_E = re.compile(r"^E\s+(?P<msg>.*)$")
_STYLISH_FILE = re.compile(r"^(?P<path>(?:/|\./)?[^\s:()'\"<>|]+\.[A-Za-z0-9_]+)$")
_STYLISH_ROW = re.compile(r"^\s+(?P<line>\d+):(?P<col>\d+)\s+(?P<level>error|warning)\s+"
                          r"(?P<msg>.+?)(?:\s{2,}(?P<rule>[@\w/-]+))?$")
_GENERIC = re.compile(r"^(?:\s*)" + _PATH + r":(?P<line>\d+)(?::(?P<col>\d+))?:? (?P<msg>\S.*)")


@dataclass(frozen=True)
class Annotation:
    """One finding: where (repository-relative) and what, at GitHub's levels."""

    path: str
    line: int
    message: str
    level: str = "failure"  # failure | warning | notice
    title: str = ""


def _level(word: str) -> str:
    return {"error": "failure", "warning": "warning", "note": "notice"}.get(word, "failure")


def annotations_from_output(
    output: str, *, is_repo_file: Callable[[str], bool], roots: Sequence[str] = (),
    title: str = "",
) -> list[Annotation]:
    """The annotations `output` names, in order, without duplicates, at most MAX_ANNOTATIONS."""
    found: list[Annotation] = []
    seen: set[tuple[str, int, str]] = set()

    def add(path: str, line: int, message: str, level: str = "failure") -> None:
        rel = _relative(path, roots)
        if rel is None or not is_repo_file(rel) or line < 1:
            return
        message = message.strip()[:MESSAGE_CHARS] or "failed here"
        if (rel, line, message) in seen or len(found) >= MAX_ANNOTATIONS:
            return
        seen.add((rel, line, message))
        found.append(Annotation(rel, line, message, level, title))

    previous = ""
    explanation: list[str] = []
    stylish_file: str | None = None  # eslint stylish: the file its indented rows are about
    for raw in output.splitlines():
        line = raw.rstrip()
        if match := _STYLISH_FILE.match(line):
            stylish_file = match["path"]
            continue
        if stylish_file is not None and (match := _STYLISH_ROW.match(line)):
            rule = f" ({match['rule']})" if match["rule"] else ""
            add(stylish_file, int(match["line"]), match["msg"] + rule, _level(match["level"]))
            continue
        if not line.strip() or not line.startswith(" "):
            stylish_file = None
        if match := _TSC_PAREN.search(line) or _TSC_PRETTY.search(line) or _MYPY.search(line):
            add(match["path"], int(match["line"]), match["msg"], _level(match["level"]))
        elif match := _RUFF_ARROW.search(line):
            code = _RUFF_CODE.match(previous.strip())
            add(match["path"], int(match["line"]), code["msg"] if code else previous)
        elif match := _PYTEST_E.match(line):
            explanation.append(match["msg"].strip())
            continue
        elif match := _GENERIC.match(line):
            message = match["msg"]
            if explanation:  # pytest: `path:line: AssertionError` after its `E   ...` lines
                message = f"{message}: {' / '.join(explanation[:3])}"
            add(match["path"], int(match["line"]), message)
        if line.strip():
            previous = line
            explanation = []
    return found


def _relative(path: str, roots: Sequence[str]) -> str | None:
    path = path.strip()
    for root in sorted(roots, key=len, reverse=True):
        prefix = root.rstrip("/") + "/"
        if path.startswith(prefix):
            return path[len(prefix):]
    if path.startswith("/"):
        return None
    return path.removeprefix("./")
