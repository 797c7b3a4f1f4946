"""The test-integrity guard's hooks (the evidence's `tests` facet): `validation` asks each
validation command's test runner for its report (a fresh host folder the sandbox may write, read
back without following links and capped, then removed) and keeps the run's figures per tree under
the state directory (`evidence/tests/<tree>.json`, a bounded number of files), and names the
failing command's failed tests on it (`failed_tests`: what is run again); `verify` compares
a validated batch with its parent (the changed files read from git, both runs' figures; the
baseline's from its summary lines) and stops a batch that makes the tests check less at the
`tests_weakened` gate, or, for recipe llm, sends the finding back to the model once first.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from jobs.adapters import scratch, tree_fd
from jobs.adapters.safe_paths import UnsafePathError, read_regular
from jobs.basics.errors import RetryClass
from jobs.engine.attempt import AttemptOutcome, Result
from jobs.engine.attempt_outcome import failed_outcome
from jobs.engine.validation_hooks import (
    RunValidation,
    TreeUnderTest,
    ValidationRequest,
    ValidationResult,
)
from jobs.features.evidence.failures import with_flaky_passed
from jobs.features.evidence.integrity import findings_for, is_read
from jobs.features.evidence.integrity_argv import Instrumented, ReportKind, instrument
from jobs.features.evidence.integrity_parts import (
    FINDINGS_KEPT,
    TESTS_WEAKENED,
    batch_tests,
    gate_reason,
    model_feedback,
    put_batch_tests,
)
from jobs.features.evidence.integrity_reports import (
    REPORT_BYTES,
    RunReport,
    combined,
    not_measured,
    parse_jest_json,
    parse_junit,
    parse_summary,
)
from jobs.features.evidence.integrity_shapes import FileChange
from jobs.features.evidence.record import BatchTests
from jobs.inputs.caps import FileTooLargeError
from jobs.inputs.recipes import rules_for
from jobs.kernel.job import Batch, Job
from jobs.kernel.records import Attempt, CommandEvidence
from jobs.ports import Workspace

KEPT_RUNS = 400  # run files kept under evidence/tests (the oldest go first)
STORED_IDS_CHARS = 2 * 1024 * 1024  # a run's ids past this are not kept (only its counts)
MAX_CHANGED_FILES = 2_000  # a batch's changed files read (more: the rest are not compared)


def runs_dir(repository: Workspace) -> Path:
    return repository.state_dir / "evidence" / "tests"


def store_run(folder: Path, tree: str, run: RunReport) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    ids = sorted(run.ids)
    keep_ids = sum(len(i) for i in ids) <= STORED_IDS_CHARS
    document = {"collected": run.collected, "passed": run.passed, "source": run.source,
                "problem": run.problem, "ids": ids if keep_ids else [],
                "passed_ids": sorted(run.passed_ids) if keep_ids else []}
    (folder / f"{tree}.json").write_text(json.dumps(document), encoding="utf-8")
    runs = sorted(folder.glob("*.json"), key=lambda p: p.stat().st_mtime)
    for old in runs[:-KEPT_RUNS]:
        old.unlink(missing_ok=True)


def load_run(folder: Path, tree: str) -> RunReport | None:
    path = folder / f"{tree}.json"
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
        return RunReport(int(document["collected"]), int(document["passed"]),
                         frozenset(document["ids"]), frozenset(document["passed_ids"]),
                         str(document["source"]), str(document["problem"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


class RunReports:
    """One validation run's reports: each command asks its runner for one in `folder`."""

    def __init__(self, store: Path, tree: str, worktree: Path) -> None:
        self.store, self.tree, self.worktree = store, tree, worktree
        self.folder = Path(tempfile.mkdtemp(prefix="stepwise-tests-"))
        self.plans: dict[int, Instrumented] = {}

    @property
    def writable(self) -> Sequence[Path]:
        return [self.folder]

    def argv(self, index: int, argv: list[str]) -> list[str]:
        plan = instrument(argv, str(self.folder), index)
        self.plans[index] = plan
        return plan.argv

    def report(self, index: int, item: CommandEvidence) -> RunReport | None:
        plan = self.plans.get(index)
        if plan is None or plan.kind is None:
            return parse_summary(item.output_tail)
        # A report in the repository is where the command left it: validation writes apart.
        root, rel = (scratch.shown_root(self.worktree, plan.report), plan.report) \
            if plan.in_repository else (self.folder, Path(plan.report).name)
        try:
            data = read_regular(root, rel, limit=REPORT_BYTES)
        except FileTooLargeError:
            return not_measured(f"the report of `{item.display}` is over {REPORT_BYTES:,} bytes")
        except (UnsafePathError, OSError):
            return parse_summary(item.output_tail) or not_measured(
                f"`{item.display}` wrote no readable report")
        return parse_junit(data) if plan.kind is ReportKind.JUNIT else parse_jest_json(data)

    def finish(self, evidence: Sequence[CommandEvidence]) -> list[RunReport | None]:
        """Each command's report read (None: it reported no tests), the run's figures kept."""
        reports: list[RunReport | None] = []
        try:
            reports = [self.report(index, item) for index, item in enumerate(evidence)]
            run = combined([found for found in reports if found is not None]) or \
                not_measured("no validation command reported tests")
            store_run(self.store, self.tree, run)
        finally:
            tree_fd.discard(self.folder)  # the commands wrote in it: any shape, any depth
        return reports

    def failed_tests(self, index: int, report: RunReport | None, seen_at: Path) -> list[str]:
        """The tests a command's report named as failed, relative to the worktree: only from a
        report Stepwise asked for in its fresh folder (one the repository names may be left
        from another run) of pytest, jest or vitest (node's JUnit names no file)."""
        plan = self.plans.get(index)
        if report is None or not report.measured or plan is None or plan.kind is None or \
                plan.in_repository or plan.runner not in ("pytest", "jest", "vitest"):
            return []
        prefix = f"{seen_at}/"
        return [test.removeprefix(prefix) for test in report.failed_ids]


def validation(job: Job, batch: Batch, attempt: Attempt, under_test: TreeUnderTest,
               request: ValidationRequest, run: RunValidation) -> ValidationResult:
    """Around the validation of a batch's candidate tree: each runner asked for its report in a
    fresh folder the sandbox may write, the run's figures kept for the tree."""
    if not request.argvs:
        return run(request)
    reports = RunReports(runs_dir(under_test.repository), under_test.tree,
                         under_test.worktree.path)
    argv_for = dict(request.argv_for)
    for index, argv in enumerate(request.argvs):
        asked = reports.argv(index, request.argv(index, list(argv)))
        if asked != list(argv):
            argv_for[index] = tuple(asked)
    evidence: list[CommandEvidence] = []
    try:
        result = run(replace(request, argv_for=argv_for,
                             writable=(*request.writable, *reports.writable)))
        evidence = result[0]
    finally:
        found = reports.finish(evidence)
    failure = result[1]
    # The failing command's tests, as its report named them: what runs again to tell whose
    # the failure is (jobs/engine/failure_check.py).
    at = next((i for i, item in enumerate(evidence) if item is failure), None)
    if failure is not None and at is not None:
        failure.failed_tests = reports.failed_tests(at, found[at], under_test.seen_at)
    return result


def baseline_run(job: Job) -> RunReport | None:
    """The baseline's figures, from its commands' summary lines (the baseline runs unmeasured)."""
    reports = [found for item in job.baseline if (found := parse_summary(item.output_tail))]
    return combined(reports)


def changed_files(under_test: TreeUnderTest) -> list[FileChange]:
    """The batch's changed test files and test configuration, before and after (None: absent
    on that side, or not text; the rest of its files are not read)."""
    repository = under_test.repository
    paths = [path for path in under_test.changed_paths if is_read(path)][:MAX_CHANGED_FILES]
    before = repository.read_texts(under_test.parent, paths)
    after = repository.read_texts(under_test.tree, paths)
    return [FileChange(path, before.get(path), after.get(path)) for path in paths]


def earlier_run(job: Job, repository: Workspace, folder: Path) -> RunReport | None:
    """The last committed batch's figures, when the head is not its commit (a note commit, a
    merge of the base since): the tests the parent runs are the ones it ran."""
    last = next((b.commit for b in reversed(job.batches) if b.commit is not None), None)
    if last is None:
        return None
    return load_run(folder, repository.tree_of(last))


def verify(job: Job, batch: Batch, attempt: Attempt,
           under_test: TreeUnderTest) -> AttemptOutcome | None:
    """A validated batch compared with its parent: the `tests_weakened` gate (recipe llm: the
    model is told once first), or None to commit it."""
    repository = under_test.repository
    parent_tree = repository.tree_of(under_test.parent)
    folder = runs_dir(repository)
    before = load_run(folder, parent_tree) or earlier_run(job, repository, folder)
    if before is None and under_test.parent == job.baseline_sha:
        before = baseline_run(job)
    after = with_flaky_passed(load_run(folder, under_test.tree), attempt.failure_check)
    findings = findings_for(changed_files(under_test),
                            before, after)
    earlier = batch_tests(batch) or BatchTests()
    tests = BatchTests(
        before=before.words() if before else "not measured",
        after=after.words() if after else "not measured",
        findings=[f.line() for f in findings[:FINDINGS_KEPT]],
        more=max(len(findings) - FINDINGS_KEPT, 0), told_model=earlier.told_model,
        accepted_by=earlier.accepted_by, accepted=earlier.accepted)
    approved = TESTS_WEAKENED in batch.approved_gates and \
        set(tests.findings) <= set(earlier.accepted)
    if not findings or approved:
        if not findings:
            tests.accepted_by, tests.accepted = "", []
        put_batch_tests(batch, tests)
        return None
    # Told once, when a retry remains (the told attempt counts as failed toward the pause).
    retry_left = batch.consecutive_failures + 1 < job.config.max_failed_attempts
    if rules_for(job.spec.recipe).uses_model and not earlier.told_model and retry_left:
        tests.told_model = True
        put_batch_tests(batch, tests)
        return failed_outcome("tests_weakened", RetryClass.NEEDS_HUMAN, model_feedback(findings),
                              "restore the tests and fix the code; a second weakening stops "
                              "at the `tests_weakened` gate", {"findings": tests.findings})
    put_batch_tests(batch, tests)
    return AttemptOutcome(Result.GATED, gate=TESTS_WEAKENED, reason=gate_reason(findings))
