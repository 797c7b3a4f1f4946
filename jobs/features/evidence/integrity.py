"""What the tests check before and after a batch, compared (pure): the findings that say a batch
makes the tests check less (gate `tests_weakened`).

A test file's tests are read as `CheckedTest`s (integrity_python.py through `ast`,
integrity_js.py for JavaScript/TypeScript); `shape_findings` compares them: tests removed or
renamed out of collection, assertions removed or changed, expected literals changed inside
assertions, skip/xfail/only/todo markers added, assertions put under a handler that swallows
their failure. Configuration that selects tests is integrity_config.py; the runner's report
(tests collected and passed) integrity_reports.py. `findings_for` takes a batch's changed files
and both reports and returns every finding, each naming the test and what changed with a short
excerpt of the diff.
"""

from __future__ import annotations

from collections.abc import Sequence

from jobs.decisions.guard import is_test_path
from jobs.features.evidence import integrity_config, integrity_js, integrity_python
from jobs.features.evidence.integrity_reports import RunReport
from jobs.features.evidence.integrity_shapes import (
    Assertion,
    FileChange,
    FileTests,
    Finding,
    excerpt,
)


def _assertion_findings(test: str, old: list[Assertion], new: list[Assertion]) -> list[Finding]:
    """Assertions compared by shape: same shape, other literals: the expected value changed;
    a shape gone: removed (or changed, when the test has a new shape in its place)."""
    findings: list[Finding] = []
    unmatched_new = list(new)
    leftover: list[Assertion] = []
    for assertion in old:  # the same assertion as it was: nothing changed
        same = next((a for a in unmatched_new if a.shape == assertion.shape
                     and a.literals == assertion.literals), None)
        if same is not None:
            unmatched_new.remove(same)
        else:
            leftover.append(assertion)
    removed: list[Assertion] = []
    for assertion in leftover:  # same shape, other literals: the expected value changed
        other = next((a for a in unmatched_new if a.shape == assertion.shape), None)
        if other is None:
            removed.append(assertion)
            continue
        unmatched_new.remove(other)
        findings.append(Finding(test, "expected value changed in an assertion",
                                excerpt(assertion.source, other.source)))
    for assertion in removed:  # a shape gone: changed into a new one, or removed
        if unmatched_new:
            replaced = unmatched_new.pop(0)
            findings.append(Finding(test, "assertion changed (loosened or replaced)",
                                    excerpt(assertion.source, replaced.source)))
        else:
            findings.append(Finding(test, "assertion removed", excerpt(assertion.source, None)))
    return findings


def shape_findings(path: str, old: FileTests, new: FileTests) -> list[Finding]:
    """What `path`'s tests check less after than before."""
    if new.unreadable and not old.unreadable:
        return [Finding(path, f"the test file no longer parses ({new.unreadable})")]
    findings = [Finding(path, f"`{marker}` added to the whole file")
                for marker in sorted(new.file_markers - old.file_markers)]
    added = {name: test.body for name, test in new.tests.items() if name not in old.tests}
    for name, before in old.tests.items():
        test = f"{path}::{name}"
        after = new.tests.get(name)
        if after is None:
            if before.body and any(body == before.body for body in added.values()):
                continue  # renamed, still collected, checking the same: nothing lost
            renamed = next((other for other, body in new.others.items()
                            if before.body and body == before.body), None)
            findings.append(Finding(test, f"renamed out of collection to `{renamed}`")
                            if renamed else Finding(test, "test removed"))
            continue
        for marker in sorted(after.markers - before.markers):
            findings.append(Finding(test, f"`{marker}` marker added"))
        if after.swallowed > before.swallowed:
            findings.append(Finding(test, "assertion failures swallowed by a try/except (or "
                                    "suppress) that does not re-raise"))
        if after.unreachable > before.unreachable:
            findings.append(Finding(test, "assertions made unreachable (an early return or skip "
                                    "before them)"))
        findings += _assertion_findings(test, before.assertions, after.assertions)
    return findings


def read_tests(path: str, text: str) -> FileTests:
    if path.endswith(".py"):
        return integrity_python.read_tests(text)
    return integrity_js.read_tests(text)


def readable_test_path(path: str) -> bool:
    return is_test_path(path) and path.endswith((".py", *integrity_js.EXTENSIONS)) \
        and not path.endswith("conftest.py")


def is_read(path: str) -> bool:
    """Whether a changed file can hold a finding: a test file, or configuration that selects
    tests."""
    return integrity_config.selects_tests(path) or readable_test_path(path)


def file_findings(change: FileChange) -> list[Finding]:
    """The findings of one changed file: a test file's tests, or test-selecting config."""
    path = change.path
    if integrity_config.selects_tests(path):
        return integrity_config.findings(path, change.before, change.after)
    if not readable_test_path(path) or change.before is None:
        return []  # a new test file only adds
    old = read_tests(path, change.before)
    if change.after is None:
        names = ", ".join(sorted(old.tests)[:10]) or "no test functions read"
        count = len(old.tests)
        return [Finding(path, f"test file deleted ({count} test{'s' if count != 1 else ''}: "
                              f"{names})")]
    return shape_findings(path, old, read_tests(path, change.after))


def run_findings(before: RunReport | None, after: RunReport | None,
                 named: Sequence[str] = ()) -> list[Finding]:
    """What the runner's reports say was lost: tests no longer collected or no longer passing
    (by id where both reports name their tests; else by count). Tests a finding of the files
    already names (`named`, bare test names) are not named again."""
    if before is None or after is None or not before.measured or not after.measured:
        return []
    seen = {name.split("::")[-1].split("[")[0] for name in named}

    def bare(test_id: str) -> str:
        return test_id.replace("::", ".").split(".")[-1].split("[")[0]

    if before.ids and after.ids:
        gone = [t for t in sorted(before.ids) if t not in after.ids and bare(t) not in seen]
        not_passing = [t for t in sorted(before.passed_ids)
                       if t in after.ids and t not in after.passed_ids and bare(t) not in seen]
        return [*(Finding(t, "no longer collected by the test runner") for t in gone),
                *(Finding(t, "no longer passes (skipped or expected to fail now)")
                  for t in not_passing)]
    findings = []
    named_tests = any("::" in name for name in named)  # the files' findings explain it
    if after.collected < before.collected and not named_tests:
        findings.append(Finding("the test run", f"fewer tests collected: {before.collected} → "
                                                 f"{after.collected} ({after.source})"))
    lost = max(before.collected - after.collected, 0)  # not passing because not collected
    if after.passed < before.passed - lost and not named_tests:
        findings.append(Finding("the test run", f"fewer tests passed: {before.passed} → "
                                                 f"{after.passed} ({after.source})"))
    return findings


def deleted_tests(change: FileChange) -> list[str]:
    """The tests of a deleted test file (a finding names the file; its tests are named too)."""
    if change.after is not None or change.before is None or not readable_test_path(change.path):
        return []
    return [f"{change.path}::{name}" for name in read_tests(change.path, change.before).tests]


def findings_for(changes: Sequence[FileChange], before: RunReport | None,
                 after: RunReport | None) -> list[Finding]:
    """Every finding of a batch: its changed files', then what the runner's reports add."""
    found = [finding for change in changes for finding in file_findings(change)]
    named = [*(f.test for f in found), *(t for c in changes for t in deleted_tests(c))]
    return found + run_findings(before, after, named)
