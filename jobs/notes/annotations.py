"""File-and-line annotations read from a failing command's output (pure).

Recognised: pytest (`path:line: Error` after its `E ...` lines), ruff (`path:line:col: CODE msg`,
and the newer `CODE msg` + ` --> path:line:col`), mypy (`path:line: error: msg  [code]`), tsc
(`path(line,col): error TSxxxx: msg` and `path:line:col - error TSxxxx: msg`), eslint's
`stylish` format (a file's path on its own line, then `  line:col  error  message  rule`), and
the generic `path:line[:col]: message` of compilers, flake8 and eslint's `unix` format. Only
paths that name a file of the repository are kept (absolute paths under the sandbox's
repository root are made relative), so an annotation always points at something a reviewer
can open.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from jobs.basics.github_limits import ANNOTATIONS_PER_RUN

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
