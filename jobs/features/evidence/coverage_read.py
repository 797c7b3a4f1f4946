"""Reading what the coverage probes left (untrusted: written inside the sandbox) and mapping it
onto a batch's changed lines: coverage.py's lines per Python file (as JSON, coverage_starter.py),
node's V8 block coverage (`NODE_V8_COVERAGE`) per JavaScript file. Sizes are capped; a file that
cannot be read counts as not measured, never as run."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import unquote, urlparse

from jobs.decisions.guard import is_test_path
from jobs.features.evidence.coverage_record import (
    NOT_CODE,
    TEST_FILE,
    UNCOVERED_KEPT,
    UNMEASURED_KEPT,
    CoverageRecord,
    not_measured,
)

PYTHON_SUFFIXES = frozenset({".py"})
NODE_SUFFIXES = frozenset({".js", ".mjs", ".cjs"})
TRANSPILED_SUFFIXES = frozenset({".ts", ".tsx", ".jsx", ".mts", ".cts", ".vue", ".svelte"})
NOT_CODE_SUFFIXES = frozenset({".md", ".rst", ".txt", ".json", ".yml", ".yaml", ".toml", ".cfg",
                               ".ini", ".lock", ".csv", ".html", ".css", ".svg", ""})
MAX_REPORTS = 400  # report files read per validation
MAX_REPORT_BYTES = 16 * 1024 * 1024  # one report
MAX_TOTAL_BYTES = 64 * 1024 * 1024  # all of them
PRAGMA = r"#\s*(pragma|PRAGMA)[:\s]?\s*(no|NO)\s*(cover|COVER)"  # coverage.py's default
_CLOSING_ONLY = re.compile(r"^[\s)\]};,]*$")


@dataclass
class Reports:
    """What the probes wrote: lines run per absolute path (Python), V8 ranges per absolute path
    (node), the tools that reported and why a probe could not measure."""

    python: dict[str, set[int]] = field(default_factory=dict)
    node: dict[str, list[list[tuple[int, int, int]]]] = field(default_factory=dict)
    tools: set[str] = field(default_factory=set)
    failures: list[str] = field(default_factory=list)
    python_reported: bool = False
    node_reported: bool = False
    unreadable: int = 0


def _documents(folder: Path, pattern: str, reports: Reports) -> Iterator[Any]:
    """Each JSON document in `folder` matching `pattern`, within the caps (regular files only)."""
    if not folder.is_dir():
        return
    spent = 0
    for path in sorted(folder.glob(pattern))[:MAX_REPORTS]:
        try:
            if not path.is_file() or path.is_symlink():
                reports.unreadable += 1
                continue
            size = path.stat().st_size
            if size > MAX_REPORT_BYTES or spent + size > MAX_TOTAL_BYTES:
                reports.unreadable += 1
                continue
            spent += size
            yield json.loads(path.read_bytes())
        except (OSError, ValueError, RecursionError):
            reports.unreadable += 1


def read_reports(out: Path, v8: Path) -> Reports:
    reports = Reports()
    for doc in _documents(out, "python-*.json", reports):
        lines = doc.get("lines") if isinstance(doc, dict) else None
        if not isinstance(lines, dict):
            reports.unreadable += 1
            continue
        reports.python_reported = True
        reports.tools.add(str(doc.get("tool", "coverage.py"))[:40])
        for name, numbers in lines.items():
            if isinstance(name, str) and isinstance(numbers, list):
                reports.python.setdefault(name, set()).update(
                    n for n in numbers if isinstance(n, int))
    for doc in _documents(out, "failed-*.json", reports):
        if isinstance(doc, dict) and isinstance(doc.get("why"), str):
            reports.failures.append(doc["why"][:300])
    for doc in _documents(v8, "coverage-*.json", reports):
        scripts = doc.get("result") if isinstance(doc, dict) else None
        if not isinstance(scripts, list):
            reports.unreadable += 1
            continue
        reports.node_reported = True
        reports.tools.add("NODE_V8_COVERAGE")
        for script in scripts:
            path = _script_path(script)
            if path is not None:
                reports.node.setdefault(path, []).append(_ranges(script))
    return reports


def _script_path(script: Any) -> str | None:
    url = script.get("url") if isinstance(script, dict) else None
    if not isinstance(url, str):
        return None
    if url.startswith("file://"):
        return unquote(urlparse(url).path)
    return url if url.startswith("/") else None


def _ranges(script: dict[str, Any]) -> list[tuple[int, int, int]]:
    found = []
    for function in script.get("functions") or []:
        for item in (function.get("ranges") or []) if isinstance(function, dict) else []:
            if isinstance(item, dict):
                start, end, count = item.get("startOffset"), item.get("endOffset"), item.get("count")
                if isinstance(start, int) and isinstance(end, int) and isinstance(count, int):
                    found.append((start, end, count))
    return found


@dataclass
class Tally:
    run: int = 0
    total: int = 0
    uncovered: list[str] = field(default_factory=list)
    unmeasured: dict[str, str] = field(default_factory=dict)

    def line(self, path: str, number: int, ran: bool) -> None:
        self.total += 1
        if ran:
            self.run += 1
        else:
            self.uncovered.append(f"{path}:{number}")


def _python(tally: Tally, path: str, text: str, changed: list[int], ran: set[int]) -> None:
    from coverage.parser import PythonParser  # here: a run with coverage off never imports it

    parser = PythonParser(text=text, filename=path, exclude=PRAGMA)
    try:
        parser.parse_source()
    except Exception:  # coverage.py's NotPython, the tokenizer's errors
        tally.unmeasured[path] = "coverage.py could not parse it"
        return
    executed = {parser.first_line(n) for n in ran}
    for number in changed:  # a line of a statement over several lines counts as the statement
        first = parser.first_line(number)
        if first in parser.statements:
            tally.line(path, number, first in executed)


def _utf16_starts(text: str) -> list[int]:
    """Where each line starts (its first non-blank character), in V8's UTF-16 offsets."""
    starts, offset = [], 0
    for line in text.splitlines(keepends=True):
        stripped = len(line) - len(line.lstrip())
        starts.append(offset + sum(2 if ord(c) > 0xFFFF else 1 for c in line[:stripped]))
        offset += sum(2 if ord(c) > 0xFFFF else 1 for c in line)
    return starts


def _node(tally: Tally, path: str, text: str, changed: list[int],
          scripts: list[list[tuple[int, int, int]]]) -> None:
    starts = _utf16_starts(text)
    length = sum(2 if ord(c) > 0xFFFF else 1 for c in text)
    if any(end > length + 1 for ranges in scripts for _, end, _ in ranges):
        tally.unmeasured[path] = "node ran a transformed copy of it (source maps are not read)"
        return
    lines = text.splitlines()
    for number in changed:
        content = lines[number - 1].strip() if 0 < number <= len(lines) else ""
        if not content or content.startswith(("//", "/*", "*")) or _CLOSING_ONLY.match(content):
            continue
        at = starts[number - 1]
        tally.line(path, number, any(_count_at(ranges, at) > 0 for ranges in scripts))


def _count_at(ranges: list[tuple[int, int, int]], offset: int) -> int:
    """The count of the innermost range holding `offset` (V8 nests block ranges in functions)."""
    inside = [(end - start, count) for start, end, count in ranges if start <= offset < end]
    return min(inside)[1] if inside else 0


def measure(*, changed: dict[str, list[int]], texts: dict[str, str | None], reports: Reports,
            roots: tuple[str, ...], skipped: dict[str, str]) -> CoverageRecord:
    """The changed lines the tests ran. `roots`: where the sandboxed commands saw the worktree;
    `skipped`: per language ("python", "node"), why the probe was not run."""
    def relative(name: str) -> str | None:
        for root in roots:
            if name.startswith(root.rstrip("/") + "/"):
                return name[len(root.rstrip("/")) + 1:]
        return None

    python = {rel: ran for name, ran in reports.python.items() if (rel := relative(name))}
    node = {rel: ranges for name, ranges in reports.node.items() if (rel := relative(name))}
    tally = Tally()
    for path, numbers in sorted(changed.items()):
        suffix = PurePosixPath(path).suffix.lower()
        text = texts.get(path)
        if is_test_path(path):
            tally.unmeasured[path] = TEST_FILE
        elif suffix in PYTHON_SUFFIXES | NODE_SUFFIXES and text is None:
            tally.unmeasured[path] = "its text could not be read"
        elif suffix in PYTHON_SUFFIXES and text is not None:
            if "python" in skipped or not reports.python_reported:
                tally.unmeasured[path] = skipped.get("python") or _silent(reports, "Python")
            else:
                _python(tally, path, text, numbers, python.get(path, set()))
        elif suffix in NODE_SUFFIXES and text is not None:
            if "node" in skipped or not reports.node_reported:
                tally.unmeasured[path] = skipped.get("node") or _silent(reports, "node")
            else:
                _node(tally, path, text, numbers, node.get(path, []))
        elif suffix in TRANSPILED_SUFFIXES:
            tally.unmeasured[path] = f"no coverage for {suffix} files (they run transformed)"
        elif suffix in NOT_CODE_SUFFIXES:
            tally.unmeasured[path] = NOT_CODE
        else:
            tally.unmeasured[path] = f"no coverage tool for {suffix} files"
    kept = dict(sorted(tally.unmeasured.items())[:UNMEASURED_KEPT])
    measured_files = set(changed) - set(tally.unmeasured)
    if not measured_files:
        whys = sorted(set(tally.unmeasured.values())) or ["no changed line"]
        return not_measured("; ".join(whys)).model_copy(update={"unmeasured": kept})
    return CoverageRecord(measured=True, run=tally.run, total=tally.total,
                          uncovered=tally.uncovered[:UNCOVERED_KEPT],
                          uncovered_count=len(tally.uncovered), unmeasured=kept,
                          tools=sorted(reports.tools))


def _silent(reports: Reports, language: str) -> str:
    if reports.failures:
        return reports.failures[0]
    if reports.unreadable:
        return f"the {language} coverage data could not be read"
    return f"no validation command ran {language} under coverage"
