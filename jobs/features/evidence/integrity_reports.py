"""The test runner's report of one validation run, read (pure): how many tests were collected and
passed, and which, from pytest's (and node's test runner's) JUnit XML, jest's and vitest's JSON
reporters, or, failing those, the summary line a runner prints (pytest, unittest, jest, vitest,
node, mocha). Reports come from the repository's code, so they are untrusted: XML is parsed by
defusedxml (no entities, no external references), a report over REPORT_BYTES is not read, at
most MAX_IDS test ids are kept, and a report that cannot be read is "not measured", never a pass.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any
from xml.etree.ElementTree import Element

import defusedxml.ElementTree as SafeXml
from defusedxml import DefusedXmlException

REPORT_BYTES = 8 * 1024 * 1024  # a bigger report is not read (not measured)
MAX_IDS = 20_000  # test ids kept per run; past it only the counts are compared
FAILED_KEPT = 200  # failing test ids named per command (more: none, the whole command re-runs)
ID_CHARS = 300


@dataclass(frozen=True)
class RunReport:
    """Tests collected and passed in one run (`ids`/`passed_ids` when the report names them);
    `source` says where the figures come from, `problem` why there are none (not measured)."""

    collected: int = 0
    passed: int = 0
    ids: frozenset[str] = frozenset()
    passed_ids: frozenset[str] = frozenset()
    source: str = ""
    problem: str = ""
    failed_ids: tuple[str, ...] = ()  # failed or in error, in the report's order (FAILED_KEPT)

    @property
    def measured(self) -> bool:
        return not self.problem

    def words(self) -> str:
        if not self.measured:
            return f"not measured ({self.problem})"
        return f"{self.collected} collected, {self.passed} passed"


def not_measured(problem: str) -> RunReport:
    return RunReport(problem=problem)


def _id(*parts: str) -> str:
    return "::".join(p for p in parts if p)[:ID_CHARS]


def _junit_path(classname: str) -> str:
    """pytest's `tests.test_rect.TestX` as `tests/test_rect.py::TestX` (the last lower-case
    part starting with `test` is the module; nested classes joined by `::`, as pytest's node ids
    are); another shape is kept as it is."""
    parts = classname.split(".")
    modules = [i for i, part in enumerate(parts) if part.startswith("test") or
               part.endswith("_test")]
    if not modules:
        return classname
    last = modules[-1]
    return _id("/".join(parts[:last + 1]) + ".py", *parts[last + 1:])


def _junit_case(case: Element) -> tuple[str, bool, bool]:
    """The case's id, whether it passed, whether it failed (or erred; skipped is neither)."""
    where = case.get("file") or _junit_path(case.get("classname") or "")
    test = _id(where, case.get("name") or "")
    tags = {child.tag for child in case}
    return test, not tags & {"failure", "error", "skipped"}, bool(tags & {"failure", "error"})


def parse_junit(data: bytes, source: str = "JUnit XML") -> RunReport:
    if len(data) > REPORT_BYTES:
        return not_measured(f"the {source} report is over {REPORT_BYTES:,} bytes")
    try:
        root = SafeXml.fromstring(data, forbid_dtd=True)
    except (SafeXml.ParseError, DefusedXmlException, ValueError) as exc:
        return not_measured(f"the {source} report could not be read: {type(exc).__name__}")
    cases = list(root.iter("testcase"))
    ids: list[str] = []
    passed_ids: list[str] = []
    failed_ids: list[str] = []
    passed = 0
    for case in cases:
        test, ok, failed = _junit_case(case)
        passed += ok
        if failed:
            failed_ids.append(test)
        if len(ids) < MAX_IDS:
            ids.append(test)
            if ok:
                passed_ids.append(test)
    keep = len(cases) <= MAX_IDS
    return RunReport(len(cases), passed, frozenset(ids) if keep else frozenset(),
                     frozenset(passed_ids) if keep else frozenset(), source,
                     failed_ids=_all_or_none(failed_ids))


def _all_or_none(failed: list[str]) -> tuple[str, ...]:
    """Every failing id, or none past FAILED_KEPT: a re-run of fewer tests than failed could
    pass and call a real failure flaky."""
    distinct = tuple(dict.fromkeys(failed))
    return distinct if len(distinct) <= FAILED_KEPT else ()


def parse_jest_json(data: bytes, source: str = "jest JSON") -> RunReport:
    """jest's `--json` report (vitest's `json` reporter writes the same shape)."""
    if len(data) > REPORT_BYTES:
        return not_measured(f"the {source} report is over {REPORT_BYTES:,} bytes")
    try:
        document: Any = json.loads(data)
        collected, passed = int(document["numTotalTests"]), int(document["numPassedTests"])
        results = document.get("testResults") or []
        ids: list[str] = []
        passed_ids: list[str] = []
        failed_ids: list[str] = []
        for suite in results[:MAX_IDS]:
            path = str(suite.get("name") or suite.get("testFilePath") or "")
            for case in (suite.get("assertionResults") or suite.get("testResults") or [])[:MAX_IDS]:
                test = _id(path, str(case.get("fullName") or case.get("title") or ""))
                ids.append(test)
                if case.get("status") == "passed":
                    passed_ids.append(test)
                elif case.get("status") == "failed":
                    failed_ids.append(test)
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        return not_measured(f"the {source} report could not be read: {type(exc).__name__}")
    keep = len(ids) == collected and collected <= MAX_IDS
    return RunReport(collected, passed, frozenset(ids) if keep else frozenset(),
                     frozenset(passed_ids) if keep else frozenset(), source,
                     failed_ids=_all_or_none(failed_ids) if keep else ())


def _count(pattern: str, text: str) -> int | None:
    match = re.search(pattern, text)
    return int(match.group(1)) if match else None


def _pytest_summary(text: str) -> RunReport | None:
    line = next((ln for ln in reversed(text.splitlines())
                 if re.search(r"\d+ (passed|failed|skipped|error|xfailed|deselected)", ln)
                 and re.search(r"in \d+(\.\d+)?s", ln)), None)
    if line is None:
        return None
    counts = {word: int(n) for n, word in re.findall(
        r"(\d+) (passed|failed|skipped|errors?|xfailed|xpassed)", line)}
    collected = sum(counts.values())
    return RunReport(collected, counts.get("passed", 0) + counts.get("xpassed", 0),
                     source="pytest's summary line")


def _unittest_summary(text: str) -> RunReport | None:
    ran = _count(r"(?m)^Ran (\d+) tests? in ", text)
    if ran is None:
        return None
    lost = sum(_count(rf"{word}=(\d+)", text) or 0
               for word in ("failures", "errors", "skipped", "expected failures"))
    return RunReport(ran, ran - lost, source="unittest's summary line")


def _jest_summary(text: str) -> RunReport | None:
    line = next((ln for ln in reversed(text.splitlines()) if re.match(r"\s*Tests:\s", ln)), None)
    if line is None:
        return None
    total = _count(r"(\d+) total", line)
    return None if total is None else RunReport(total, _count(r"(\d+) passed", line) or 0,
                                                source="jest's summary line")


def _vitest_summary(text: str) -> RunReport | None:
    line = next((ln for ln in reversed(text.splitlines()) if re.match(r"\s*Tests\s+\d", ln)), None)
    total = _count(r"\((\d+)\)", line or "")
    if line is None or total is None:
        return None
    return RunReport(total, _count(r"(\d+) passed", line) or 0, source="vitest's summary line")


def _tap_summary(text: str) -> RunReport | None:
    """node's test runner (`# tests 5`, `# pass 5`) and TAP-style runners; mocha's `N passing`."""
    tests, passed = _count(r"(?m)^[#ℹ] tests (\d+)", text), _count(r"(?m)^[#ℹ] pass (\d+)", text)
    if tests is not None and passed is not None:
        return RunReport(tests, passed, source="node's test runner summary")
    passing = _count(r"(?m)^\s+(\d+) passing\b", text)
    if passing is None:
        return None
    lost = (_count(r"(?m)^\s+(\d+) failing\b", text) or 0) + \
        (_count(r"(?m)^\s+(\d+) pending\b", text) or 0)
    return RunReport(passing + lost, passing, source="mocha's summary line")


def parse_summary(output: str) -> RunReport | None:
    """The runner's own summary line in a command's output tail (None: no runner's line)."""
    for reader in (_pytest_summary, _unittest_summary, _jest_summary, _vitest_summary,
                   _tap_summary):
        found = reader(output)
        if found is not None:
            return found
    return None


def combined(reports: list[RunReport]) -> RunReport | None:
    """One run's figures from several commands' reports (None: no command ran tests)."""
    if not reports:
        return None
    problems = [r.problem for r in reports if not r.measured]
    if problems:
        return not_measured("; ".join(problems))
    named = all(r.ids for r in reports)
    return RunReport(sum(r.collected for r in reports), sum(r.passed for r in reports),
                     frozenset().union(*(r.ids for r in reports)) if named else frozenset(),
                     frozenset().union(*(r.passed_ids for r in reports)) if named
                     else frozenset(), ", ".join(sorted({r.source for r in reports})))
