"""Changed-line coverage in local mode (issue 39, item 2), on real git repositories validated by
real pytest (and node's test runner) in the real sandbox: the changed lines the tests ran, the
ones of a module no test imports listed as `path:line`, the `uncovered_change` gate a floor
opens, a repository's own coverage kept, and "coverage: not measured" with its reason."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from jobs.engine.engine import Outcome
from jobs.features.evidence.coverage_record import CoverageRecord
from jobs.features.evidence.coverage_texts import record_of
from jobs.inputs.spec import IssueTask
from jobs.kernel.model import BatchStatus, JobStatus, Verb
from jobs.local import LocalSession
from jobs.notes.progress import render_card
from tests.jobs.features.evidence.coverage_repos import (
    node_issue,
    node_repo,
    python_issue,
    python_repo,
)
from tests.kit.local_e2e import NUMBER, Recorder, load_job, show
from tests.kit.repos import git


def run(repo: Path, issue: Callable[[], IssueTask] = python_issue,
        ) -> tuple[LocalSession, Outcome]:
    local = LocalSession(repo, NUMBER, sink=Recorder())
    return local, local.run(issue(), yes=True)


def coverage_of(repo: Path, batch: int = 1) -> CoverageRecord:
    record = record_of(load_job(repo).batch(batch))
    assert record is not None
    return record


def test_a_module_no_test_imports_is_named_line_by_line(tmp_path: Path) -> None:
    repo = python_repo(tmp_path / "repo")
    run(repo)
    job = load_job(repo)
    assert job.status is JobStatus.COMPLETED
    record = coverage_of(repo)
    assert (record.measured, record.run, record.total) == (True, 1, 2)
    assert record.uncovered == ["pkg/orphan.py:7"]
    note = show(repo, job.branch, job.note_path)
    assert "## Evidence" in note
    assert "changed lines run by the tests: 1 of 2 (50%)" in note
    assert "changed lines the tests did not run: `pkg/orphan.py:7`" in note
    card = render_card(job)
    assert "changed lines run by the tests: 1 of 2 (50%)" in card


def test_below_the_floor_the_batch_stops_at_uncovered_change_and_approve_commits_it(
        tmp_path: Path) -> None:
    repo = python_repo(tmp_path / "repo", config={"evidence": {"min_changed_coverage": 80}})
    local, outcome = run(repo)
    job = load_job(repo)
    assert job.gate is not None and job.gate.kind == "uncovered_change"
    assert outcome.exit_code == 4
    assert job.batch(1).status is BatchStatus.PENDING and job.batch(1).commit is None
    prompt = outcome.message
    assert "changed lines run by the tests: 1 of 2 (50%), below `evidence.min_changed_coverage` " \
        "(80%)" in prompt
    assert "`pkg/orphan.py:7`" in prompt
    message, done = local.verb(Verb.APPROVE)
    assert "uncovered_change accepted" in message
    job = load_job(repo)
    assert done.status is JobStatus.COMPLETED and job.batch(1).commit is not None


def test_below_the_floor_skip_leaves_the_batch_out(tmp_path: Path) -> None:
    repo = python_repo(tmp_path / "repo", config={"evidence": {"min_changed_coverage": 80}})
    local, _ = run(repo)
    local.verb(Verb.SKIP, reason="orphan module, dead code")
    job = load_job(repo)
    assert job.batch(1).status is BatchStatus.SKIPPED and job.status is JobStatus.COMPLETED


def test_at_or_over_the_floor_the_batch_is_committed_without_a_gate(tmp_path: Path) -> None:
    repo = python_repo(tmp_path / "repo", config={"evidence": {"min_changed_coverage": 50}})
    run(repo)
    assert load_job(repo).status is JobStatus.COMPLETED


def test_coverage_off_says_not_measured_and_why(tmp_path: Path) -> None:
    repo = python_repo(tmp_path / "repo", config={"evidence": {"coverage": "off",
                                                               "min_changed_coverage": 80}})
    run(repo)
    job = load_job(repo)
    assert job.status is JobStatus.COMPLETED  # nothing measured: never a gate, never a failure
    record = coverage_of(repo)
    assert not record.measured
    assert "coverage: not measured (`evidence.coverage` is `off`)" in \
        show(repo, job.branch, job.note_path)


def test_a_repository_s_own_coverage_options_are_kept(tmp_path: Path) -> None:
    """pytest's `addopts` names `--cov` (a local plugin takes it, as pytest-cov would): Stepwise
    adds no second coverage, the command passes as it is, and the note says why."""
    plugin = ("def pytest_addoption(parser):\n"
              "    parser.addoption('--cov', action='append', default=[])\n")
    repo = python_repo(tmp_path / "repo", extra={"pytest.ini": "[pytest]\naddopts = --cov=pkg\n",
                                                 "conftest.py": plugin})
    run(repo)
    job = load_job(repo)
    assert job.status is JobStatus.COMPLETED
    record = coverage_of(repo)
    assert not record.measured
    assert record.why == "the repository runs its own coverage (`--cov` in pytest.ini)"


def test_a_runner_without_coverage_support_is_not_measured_never_failed(tmp_path: Path) -> None:
    """A Python package whose validation runs no Python (a node script checks it): its Python
    files are not measured, which is said, and the floor opens no gate."""
    repo = python_repo(tmp_path / "repo", config={
        "validate": ["node -e 0"], "allow_commands": ["node"],
        "evidence": {"min_changed_coverage": 90}})
    run(repo)
    job = load_job(repo)
    assert job.status is JobStatus.COMPLETED
    record = coverage_of(repo)
    assert not record.measured
    assert record.why == "no validation command ran Python under coverage"
    assert "coverage: not measured (no validation command ran Python under coverage)" in \
        show(repo, job.branch, job.note_path)


def test_node_v8_coverage_maps_blocks_onto_changed_lines(tmp_path: Path) -> None:
    repo = node_repo(tmp_path / "repo")
    run(repo, node_issue)
    job = load_job(repo)
    assert job.status is JobStatus.COMPLETED, job.error
    record = coverage_of(repo)
    assert record.tools == ["NODE_V8_COVERAGE"]
    # used.js: line 7 ran, line 5 (the negative branch) did not; orphan.js was never loaded
    assert (record.run, record.total) == (1, 4)
    assert record.uncovered == ["lib/orphan.js:5", "lib/orphan.js:7", "lib/used.js:5"]


def test_the_repository_s_own_pythonpath_is_kept_beside_the_probe(tmp_path: Path) -> None:
    """`env: {PYTHONPATH: src}` (a src layout): the probe's folder goes in front of it, so the
    package still imports and its lines are measured."""
    repo = python_repo(tmp_path / "repo", config={"env": {"PYTHONPATH": "src"}})
    for name in ("__init__.py", "helpers.py", "used.py", "orphan.py"):
        (repo / "src" / "pkg").mkdir(parents=True, exist_ok=True)
        (repo / "pkg" / name).rename(repo / "src" / "pkg" / name)
    (repo / "pkg").rmdir()
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "src layout")
    run(repo, lambda: python_issue(paths=["src/pkg/*.py"], exclude=["src/pkg/helpers.py"]))
    job = load_job(repo)
    assert job.status is JobStatus.COMPLETED, job.error
    record = coverage_of(repo)
    assert (record.run, record.total, record.uncovered) == (1, 2, ["src/pkg/orphan.py:7"])
