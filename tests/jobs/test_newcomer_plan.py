"""Issue 13 on real temporary repositories: what the plan refuses, leaves out, keeps and checks.

Re-planning after `spec_changed` keeps finished batches; plans that cannot change anything are
bad input; files no batch may edit are left out at plan time with their rule; a failing
baseline shows its output and is run again at `approve`; `revert` validates the reverted head.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from jobs.basics.errors import BadInputError
from jobs.kernel.gates import Verb
from jobs.kernel.model import BatchStatus, Gate, JobStatus
from jobs.ports import Publication
from tests.kit.local_e2e import (
    MODULES,
    Recorder,
    assert_exit,
    batch_commits,
    branch_commits,
    branch_head,
    build_sample,
    changed_paths,
    config_text,
    issue,
    load_job,
    session,
    show,
    state_path,
    write_issue,
)
from tests.kit.repos import commit_all, git

# -- 1. re-planning after spec_changed ----------------------------------------------------------

def test_replan_after_spec_changed_keeps_finished_batches_and_redoes_no_file(
        tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo")
    issue_file = write_issue(tmp_path / "issue.md")
    local = session(repo)
    assert_exit(local.run_file(issue_file, yes=False), 3)
    assert_exit(local.verb(Verb.APPROVE)[1], 3)  # milestone 1 done: batches 1 and 2 committed
    done_before = {f for b in load_job(repo).batches if b.status is BatchStatus.COMPLETED
                   for f in b.files}
    assert len(done_before) == 4

    write_issue(issue_file, not_doing=["remove old_sum() itself", "touch the docs"])
    recorder = Recorder()
    assert_exit(session(repo, sink=recorder).run_file(issue_file, yes=False), 3)
    assert load_job(repo).gate.kind is Gate.SPEC_CHANGED  # type: ignore[union-attr]
    _message, outcome = session(repo, sink=recorder).verb(Verb.APPROVE)
    assert_exit(outcome, 3)
    job = load_job(repo)
    assert job.gate is not None and job.gate.kind is Gate.PLAN
    kept = [b for b in job.batches if b.status is BatchStatus.COMPLETED]
    new = [b for b in job.batches if b.status is BatchStatus.PENDING]
    assert [b.number for b in kept] == [1, 2]
    assert {f for b in new for f in b.files} == set(MODULES) - done_before
    plan = recorder.texts(Publication.PLAN)[-1]
    assert "Kept from before the re-plan: 2 batches (2 completed; 4 files)" in plan
    assert "batch 1: `calc/alpha/area.py`, `calc/alpha/perimeter.py` (2 targets) — completed, " \
        "kept" in plan

    assert_exit(session(repo).verb(Verb.APPROVE)[1], 0)
    job = load_job(repo)
    touched = [p for c in batch_commits(branch_commits(repo, job))
               for p in changed_paths(repo, c.sha)]
    assert sorted(touched) == sorted(MODULES)  # every module edited by exactly one batch


# -- 2. plans that cannot succeed ---------------------------------------------------------------

def test_paths_matching_no_tracked_file_is_bad_input_naming_paths(tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo")
    with pytest.raises(BadInputError) as caught:
        session(repo).run(issue(paths=["calcc/**/*.py"]), yes=True)
    assert "spec field `paths` (`calcc/**/*.py`) matches no tracked file" in caught.value.message
    assert "git ls-files" in caught.value.hint
    assert not state_path(repo).exists()
    assert git(repo, "for-each-ref", "refs/heads/stepwise/") == ""


def test_paths_matching_only_protected_files_is_bad_input_naming_the_rule(
        tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo")
    with pytest.raises(BadInputError) as caught:
        session(repo).run(issue(paths=[".github/**"], exclude=None), yes=True)
    assert "every file spec field `paths` (`.github/**`) matches is left out" in \
        caught.value.message
    assert "protected_paths: `.github/**`" in caught.value.message
    assert not state_path(repo).exists()


# -- 3. refusals found at plan time -------------------------------------------------------------

def test_a_run_program_off_allow_commands_is_refused_at_run(tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo")
    with pytest.raises(BadInputError) as caught:
        session(repo).run(issue(recipe="command", replace=None, run="ruff check --fix {files}"),
                          yes=True)
    assert "spec field `run` cannot run: `ruff` is not on allow_commands" in caught.value.message
    assert not state_path(repo).exists()


CODEMOD = '''import sys
from pathlib import Path

for name in sys.argv[1:]:
    path = Path(name)
    path.write_text(path.read_text().replace("old_sum(", "new_sum("))
'''


def test_tests_symlinks_and_submodules_are_left_out_at_plan_time_with_their_rule(
        tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo")
    (repo / "tools").mkdir()
    (repo / "tools/codemod.py").write_text(CODEMOD)
    (repo / "calc/alpha/tests").mkdir()
    (repo / "calc/alpha/tests/check_area.py").write_text("from calc import legacy\n"
                                                         "legacy.old_sum(1)\n")
    os.symlink("area.py", repo / "calc/alpha/shortcut.py")
    head = commit_all(repo, "tools, a test module and a symlink")
    git(repo, "update-index", "--add", "--cacheinfo", f"160000,{head},calc/alpha/vendored.py")
    git(repo, "commit", "-q", "-m", "a submodule")
    recorder = Recorder()
    spec = issue(recipe="command", replace=None, find=None, exclude=None,
                 run="python tools/codemod.py {files}", paths=["calc/alpha/**"])
    assert_exit(session(repo, sink=recorder).run(spec, yes=True), 0)
    job = load_job(repo)
    assert [(item.path, item.rule) for item in job.left_out] == [
        ("calc/alpha/shortcut.py", "symlink (mode 120000): Stepwise never changes symlinks"),
        ("calc/alpha/tests/check_area.py", "test file: allow_test_edits is false"),
        ("calc/alpha/vendored.py", "submodule (mode 160000): Stepwise never changes submodules"),
    ]
    planned = {f for b in job.batches for f in b.files}
    assert planned.isdisjoint(item.path for item in job.left_out)
    assert all(b.status in (BatchStatus.COMPLETED, BatchStatus.SKIPPED) for b in job.batches)
    assert all(len(b.attempts) == 1 for b in job.batches)  # no batch failed the guard
    plan = recorder.texts(Publication.PLAN)[0]
    assert "Left out (3 files in `paths` no batch may edit):" in plan
    assert "- `calc/alpha/tests/check_area.py` — test file: allow_test_edits is false" in plan
    note = show(repo, job.branch, job.note_path)
    assert "## Left out" in note and "calc/alpha/vendored.py` — submodule" in note


def test_with_find_only_matching_left_out_files_are_listed(tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo")
    (repo / "tests/test_legacy.py").write_text("from calc import legacy\n\n"
                                               "assert legacy.old_sum(1) == 1\n")
    commit_all(repo, "a test calling old_sum")
    assert_exit(session(repo).run(issue(paths=["**/*.py"]), yes=False), 3)
    job = load_job(repo)
    # tests/test_calc.py and tests/__init__.py have no target: no news, not listed.
    assert [(i.path, i.rule) for i in job.left_out] == [
        ("tests/test_legacy.py", "test file: allow_test_edits is false")]


# -- 4. a failing baseline ----------------------------------------------------------------------

def tool_config(**overrides: object) -> str:
    return config_text(validate=["checker", "python -m unittest discover -s tests -q"],
                       allow_commands=["python", "checker"], **overrides)


def install_checker(bin_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Put a `checker` program on the PATH that runs `stepwise` (validation finds it there)."""
    bin_dir.mkdir(exist_ok=True)
    tool = bin_dir / "checker"
    tool.write_text("#!/bin/sh\necho checker is happy\n")
    tool.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")


def test_failing_baseline_shows_its_output_and_approve_runs_it_again(tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo", failing_baseline=True)
    recorder = Recorder()
    assert_exit(session(repo, sink=recorder).run(issue(), yes=True), 3)
    plan = recorder.texts(Publication.PLAN)[0]
    assert "FAILS" in plan and "last" in plan and "AssertionError: 1 != 2" in plan
    notices = recorder.texts(Publication.NOTICE)
    assert any(n.startswith("--yes does not pass the plan gate: the baseline validation fails")
               for n in notices)

    _message, outcome = session(repo).verb(Verb.APPROVE)
    assert_exit(outcome, 3)  # run again, still failing: the gate stays and says why
    job = load_job(repo)
    assert job.gate is not None and job.gate.kind is Gate.PLAN
    assert job.gate.reason.startswith("the plan was approved, but the baseline validation fails")
    assert job.approved_digest is None
    assert not any(b.attempts for b in job.batches)
    assert branch_head(repo, job.branch) == job.base_sha


def test_approve_after_the_baseline_was_fixed_starts_and_the_note_says_it_passed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = build_sample(tmp_path / "repo", config=tool_config(batches_per_milestone=4))
    assert_exit(session(repo).run(issue(), yes=False), 3)
    job = load_job(repo)
    assert job.baseline_ok is False and job.baseline[0].exit_code == 127  # checker missing

    install_checker(tmp_path / "bin", monkeypatch)
    assert_exit(session(repo).verb(Verb.APPROVE)[1], 0)
    job = load_job(repo)
    assert job.status is JobStatus.COMPLETED and job.baseline_ok is True
    assert job.baseline_sha == job.base_sha
    note = show(repo, job.branch, job.note_path)
    assert f"- Baseline validation on `{job.base_sha[:7]}`: passes (`checker` → exit 0" in note
    assert "FAILS" not in note


# -- 6. revert ----------------------------------------------------------------------------------

MANY = "from calc import legacy\n\n\n\n\n\n\n" + "legacy.old_sum(1)\n" * 5  # lines 8 to 12


def test_revert_validates_the_head_and_the_note_lists_what_came_back_in_line_order(
        tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo", config=config_text(batches_per_milestone=4))
    (repo / "calc/alpha/many.py").write_text(MANY)
    commit_all(repo, "a module with many calls")
    assert_exit(session(repo).run(issue(), yes=True), 0)
    job = load_job(repo)
    first = job.batch(1)
    assert "calc/alpha/many.py" in first.files
    assert job.final_review is not None and job.final_review.leftovers == []

    message, _outcome = session(repo).revert(1)
    assert "the reverted head passes validation" in message
    job = load_job(repo)
    reverted = job.batch(1)
    assert reverted.status is BatchStatus.REVERTED and reverted.revert_ok is True
    assert reverted.revert_commands and reverted.revert_commands[0].exit_code == 0
    assert job.final_review is not None
    assert job.final_review.merged_with_base and job.final_review.commands
    # Recomputed from the branch's tree, each with the line's text.
    assert "calc/alpha/many.py:12 — legacy.old_sum(1)" in job.final_review.leftovers
    note = show(repo, job.branch, job.note_path)
    leftovers = note.split("## Leftovers for a human to confirm", 1)[1]
    many = [line for line in leftovers.splitlines() if "many.py" in line]
    # The file whose change the revert undid comes first (issue 41.6), then its targets in order.
    assert many == [f"- `calc/alpha/many.py` — batch 1's change to it was reverted "
                    f"(`{reverted.revert_commit[:7]}`)"] + \
        [f"- `calc/alpha/many.py:{n} — legacy.old_sum(1)`" for n in (8, 9, 10, 11, 12)]
    assert "the head after the revert" in note and "passes validation" in note
