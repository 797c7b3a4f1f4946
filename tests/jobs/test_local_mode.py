"""End-to-end tests of local mode on real temporary git repositories.

Validation commands really run (through bubblewrap when available); the engine is driven
in-process through `LocalSession`, the way the CLI drives it.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from jobs.adapters.sandbox import bubblewrap_available
from jobs.adapters.workspace import CommitInfo
from jobs.domain.gates import RefusedError, Verb
from jobs.domain.model import BatchStatus, Gate, Job, JobStatus
from jobs.engine.engine import Outcome
from jobs.ports import Publication
from tests.kit.local_e2e import (
    BROKEN_MODULE,
    FIND,
    MODULES,
    NUMBER,
    VALIDATE,
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
    note_commits,
    run_tests_at,
    session,
    show,
)
from tests.kit.repos import git

NOTE_NAME = re.compile(rf"^docs/agent-changes/\d{{8}}T\d{{6}}Z-issue-{NUMBER}\.md$")


# -- 1. the realistic job ----------------------------------------------------------------------

@dataclass
class Realistic:
    repo: Path
    work: Path
    recorder: Recorder
    outcomes: list[Outcome] = field(default_factory=list)
    heads: list[str | None] = field(default_factory=list)
    commits_at_milestone: list[CommitInfo] = field(default_factory=list)
    user_before: dict[str, str] = field(default_factory=dict)
    user_after: dict[str, str] = field(default_factory=dict)


def user_checkout(repo: Path) -> dict[str, str]:
    return {
        "branch": git(repo, "symbolic-ref", "--short", "HEAD"),
        "head": git(repo, "rev-parse", "HEAD"),
        "status": git(repo, "status", "--porcelain", "--untracked-files=all"),
        "dirty": (repo / "calc/alpha/area.py").read_text(),
        "untracked": (repo / "scratch.txt").read_text(),
        "worktrees": git(repo, "worktree", "list", "--porcelain"),
    }


@pytest.fixture(scope="module")
def realistic(tmp_path_factory: pytest.TempPathFactory) -> Realistic:
    work = tmp_path_factory.mktemp("realistic")
    repo = build_sample(work / "repo")
    # The user has uncommitted work in scope and an untracked file: neither may be touched.
    area = repo / "calc/alpha/area.py"
    area.write_text(area.read_text() + "# the user's unsaved thought: old_sum(\n")
    (repo / "scratch.txt").write_text("untracked notes\n")
    state = Realistic(repo=repo, work=work, recorder=Recorder())
    state.user_before = user_checkout(repo)
    local = session(repo, sink=state.recorder)

    state.outcomes.append(local.run(issue(), yes=False))
    job = load_job(repo)
    state.heads.append(branch_head(repo, job.branch))
    state.outcomes.append(local.verb(Verb.APPROVE)[1])
    state.commits_at_milestone = branch_commits(repo, load_job(repo))
    state.outcomes.append(local.verb(Verb.APPROVE)[1])
    state.user_after = user_checkout(repo)
    return state


def test_realistic_plan_gate_commits_nothing(realistic: Realistic) -> None:
    plan = realistic.outcomes[0]
    assert_exit(plan, 3)
    assert "`plan`" in plan.message and "stepwise approve" in plan.message
    job = load_job(realistic.repo)
    assert realistic.heads[0] == job.base_sha  # the branch exists but holds nothing new
    plans = realistic.recorder.texts(Publication.PLAN)
    assert len(plans) == 1
    assert "3 batches in 2 milestones" in plans[0]
    assert "passes" in plans[0]  # the baseline result is shown
    assert "remove old_sum() itself" in plans[0]  # the not-doing list


def test_realistic_milestone_gate_after_first_milestone(realistic: Realistic) -> None:
    milestone = realistic.outcomes[1]
    assert_exit(milestone, 3)
    assert "`milestone`" in milestone.message
    commits = realistic.commits_at_milestone
    assert [c.trailers.get("Stepwise-Batch") for c in batch_commits(commits)] == ["1", "2"]
    assert len(note_commits(commits)) == 1
    assert commits[-1] is note_commits(commits)[0]
    assert len(commits) == 3


def test_realistic_completes_with_validated_branch(realistic: Realistic) -> None:
    assert_exit(realistic.outcomes[2], 0)
    job = load_job(realistic.repo)
    assert job.status is JobStatus.COMPLETED
    assert len(job.batches) >= 3
    assert job.milestone_count == 2
    assert sum(len(b.files) for b in job.batches) >= 6
    assert all(b.status is BatchStatus.COMPLETED for b in job.batches)
    assert job.final_review is not None and job.final_review.ok
    # The sample's own tests pass in a fresh checkout of the branch head.
    done = run_tests_at(realistic.repo, job.branch, realistic.work / "check")
    assert done.returncode == 0, done.stderr
    assert f"Ran {len(MODULES)} tests" in done.stderr


def test_realistic_one_commit_per_batch_with_trailers(realistic: Realistic) -> None:
    job = load_job(realistic.repo)
    commits = branch_commits(realistic.repo, job)
    batches = batch_commits(commits)
    total = len(job.batches)
    assert len(batches) == total
    for batch, commit in zip(job.batches, batches, strict=True):
        assert re.fullmatch(
            rf"stepwise\(#{NUMBER}\): batch {batch.number}/{total} — .+", commit.subject
        ), commit.subject
        assert commit.trailers["Stepwise-Job"] == job.id
        assert commit.trailers["Stepwise-Batch"] == str(batch.number)
        assert commit.trailers["Stepwise-Milestone"] == str(batch.milestone)
        assert batch.commit == commit.sha
        assert set(changed_paths(realistic.repo, commit.sha)) == set(batch.files)
        assert len(commit.parents) == 1
    # Every commit on the branch is a batch commit or a note commit.
    notes = note_commits(commits)
    assert len(batches) + len(notes) == len(commits)
    assert len(notes) == 2  # milestone 1, final
    for note in notes:
        assert changed_paths(realistic.repo, note.sha) == [job.note_path]
        assert note.trailers["Stepwise-Job"] == job.id


def test_realistic_note_lists_every_commit_and_command(realistic: Realistic) -> None:
    job = load_job(realistic.repo)
    assert NOTE_NAME.match(job.note_path), job.note_path
    assert job.note_path.endswith(f"{job.created_at:%Y%m%dT%H%M%SZ}-issue-{NUMBER}.md")
    note = show(realistic.repo, job.branch, job.note_path)
    assert job.title in note
    assert "remove old_sum() itself" in note
    rows = {line for line in note.splitlines() if line.startswith("| ")}
    for batch in job.batches:
        assert batch.commit is not None
        row = next((r for r in rows if f" {batch.commit[:7]} " in r), None)
        assert row is not None, f"batch {batch.number}'s commit is not in the note"
        assert f"`{VALIDATE}` → exit 0" in row
        assert all(path in row for path in batch.files)
    assert "## Final review" in note


def test_realistic_no_match_remains(realistic: Realistic) -> None:
    job = load_job(realistic.repo)
    found = git(realistic.repo, "grep", "-n", "-P", FIND, job.branch, "--", "calc",
                ":!calc/legacy.py", check=False)
    assert found == ""
    assert job.final_review is not None and job.final_review.leftovers == []
    for path in MODULES:
        assert "legacy.new_sum(" in show(realistic.repo, job.branch, path)


def test_realistic_user_checkout_untouched(realistic: Realistic) -> None:
    assert realistic.user_after == realistic.user_before
    assert realistic.user_before["branch"] == "main"


# -- 2. a batch that fails validation twice ----------------------------------------------------

@pytest.fixture
def failing_job(tmp_path: Path) -> tuple[Path, Outcome]:
    repo = build_sample(tmp_path / "repo", broken=True,
                        config=config_text(batches_per_milestone=4))
    return repo, session(repo).run(issue(), yes=True)


def failing_batch(job: Job) -> int:
    return next(b.number for b in job.batches if BROKEN_MODULE in b.files)


def test_failure_gate_after_two_failed_validations(failing_job: tuple[Path, Outcome]) -> None:
    repo, outcome = failing_job
    assert_exit(outcome, 4)
    job = load_job(repo)
    number = failing_batch(job)
    batch = job.batch(number)
    assert job.status is JobStatus.AWAITING_HUMAN
    assert job.gate is not None and job.gate.kind is Gate.FAILURE and job.gate.batch == number
    assert batch.status is BatchStatus.FAILED and batch.commit is None
    # Never committed: no commit on the branch carries this batch's trailer.
    trailers = [c.trailers.get("Stepwise-Batch") for c in branch_commits(repo, job)]
    assert str(number) not in trailers
    assert len(batch.attempts) == 2
    for attempt in batch.attempts:
        assert attempt.outcome == "failed"
        assert attempt.error is not None and attempt.error.code == "validation_failed"
        assert attempt.error.evidence["command"] == VALIDATE
        assert attempt.error.evidence["exit_code"] not in (0, None)
        assert "NameError" in attempt.error.evidence["output_tail"]
        failed = [c for c in attempt.commands if c.exit_code != 0]
        assert failed and failed[-1].display == VALIDATE and "NameError" in failed[-1].output_tail
    report = job.gate.report
    assert report is not None
    assert report.code == "validation_failed"
    assert report.retry_class == "needs_human"
    assert report.hint
    assert "NameError" in outcome.message  # the output tail is shown with the gate


def test_retry_resets_and_fails_again_then_skip_carries_on(
    failing_job: tuple[Path, Outcome],
) -> None:
    repo, _ = failing_job
    local = session(repo)
    number = failing_batch(load_job(repo))
    message, outcome = local.verb(Verb.RETRY)
    assert "attempt counter reset" in message
    assert_exit(outcome, 4)
    job = load_job(repo)
    assert len(job.batch(number).attempts) == 4  # two more attempts after the reset
    assert job.batch(number).consecutive_failures == 2

    reason = "total.py imports old_sum by name; a human will port it"
    message, outcome = local.verb(Verb.SKIP, reason=reason)
    assert_exit(outcome, 0)
    job = load_job(repo)
    batch = job.batch(number)
    assert batch.status is BatchStatus.SKIPPED and batch.reason == reason
    assert batch.commit is None
    others = [b for b in job.batches if b.number != number]
    assert others and all(b.status is BatchStatus.COMPLETED for b in others)
    assert number < max(b.number for b in job.batches)  # the job carried on after the skip
    note = show(repo, job.branch, job.note_path)
    assert "## Skipped" in note
    assert f"- batch {number}: {reason}" in note
    # What the skipped batch left behind is listed for a human.
    assert any(item.startswith(BROKEN_MODULE) for item in job.final_review.leftovers)  # type: ignore[union-attr]
    assert BROKEN_MODULE in note.split("## Leftovers", 1)[1]


# -- 3. re-running after completion --------------------------------------------------------------

def test_rerun_after_completion_adds_nothing(tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo")
    assert_exit(session(repo).run(issue(), yes=True), 0)
    job = load_job(repo)
    head = branch_head(repo, job.branch)
    again = session(repo).run(issue(), yes=True)
    assert_exit(again, 0)
    assert branch_head(repo, job.branch) == head
    assert load_job(repo).version == job.version  # not even the record changed
    assert git(repo, "for-each-ref", "--format=%(refname)", "refs/heads/stepwise/") \
        == f"refs/heads/{job.branch}"


# -- 9. the spec changes -----------------------------------------------------------------------

def test_spec_changed_after_approval_opens_gate_then_replans(tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo", config=config_text(batches_per_milestone=1))
    local = session(repo)
    assert_exit(local.run(issue(), yes=False), 3)
    assert_exit(local.verb(Verb.APPROVE)[1], 3)  # milestone 1 (batch 1) is done
    before = load_job(repo)
    assert before.gate is not None and before.gate.kind is Gate.MILESTONE
    head = branch_head(repo, before.branch)

    changed = issue(not_doing=["remove old_sum() itself", "touch the tests"])
    outcome = local.run(changed, yes=False)
    assert_exit(outcome, 3)
    job = load_job(repo)
    assert job.gate is not None and job.gate.kind is Gate.SPEC_CHANGED
    assert "spec_changed" in outcome.message
    assert branch_head(repo, job.branch) == head  # nothing ran

    # --yes does not pass a spec_changed gate.
    assert_exit(local.run(changed, yes=True), 3)
    assert load_job(repo).gate.kind is Gate.SPEC_CHANGED  # type: ignore[union-attr]

    recorder = Recorder()
    outcome = session(repo, sink=recorder).verb(Verb.APPROVE)[1]
    assert_exit(outcome, 3)
    job = load_job(repo)
    assert job.gate is not None and job.gate.kind is Gate.PLAN
    assert job.spec.not_doing == ["remove old_sum() itself", "touch the tests"]
    assert job.approved_digest is None
    assert len(recorder.texts(Publication.PLAN)) == 1 and "touch the tests" in recorder.texts(
        Publication.PLAN)[0]
    # The committed batch is kept; only the rest is planned again.
    first = job.batch(1)
    assert first.status is BatchStatus.COMPLETED and first.commit == before.batch(1).commit
    assert [b.number for b in job.batches] == list(range(1, len(job.batches) + 1))

    assert_exit(local.run(changed, yes=True), 0)
    job = load_job(repo)
    assert len(batch_commits(branch_commits(repo, job))) == len(job.batches)


def test_spec_changed_before_approval_just_replans(tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo")
    recorder = Recorder()
    local = session(repo, sink=recorder)
    assert_exit(local.run(issue(), yes=False), 3)
    outcome = local.run(issue(batch_size=3), yes=False)
    assert_exit(outcome, 3)
    job = load_job(repo)
    assert job.gate is not None and job.gate.kind is Gate.PLAN
    assert job.spec.batch_size == 3
    assert len(recorder.texts(Publication.PLAN)) == 2
    assert not any(e.kind == "gate" and "spec_changed" in e.message for e in job.events)
    assert branch_head(repo, job.branch) == job.base_sha


# -- 10. a failing baseline --------------------------------------------------------------------

def test_failing_baseline_is_shown_and_yes_does_not_pass_the_plan(tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo", failing_baseline=True)
    recorder = Recorder()
    outcome = session(repo, sink=recorder).run(issue(), yes=True)
    assert_exit(outcome, 3)
    job = load_job(repo)
    assert job.gate is not None and job.gate.kind is Gate.PLAN
    assert job.baseline_ok is False
    assert job.baseline and job.baseline[0].exit_code != 0
    plan = recorder.texts(Publication.PLAN)[0]
    assert "FAILS" in plan and f"`{VALIDATE}` → exit 1" in plan
    assert branch_head(repo, job.branch) == job.base_sha
    # Running again with --yes still waits for a human.
    assert_exit(session(repo).run(issue(), yes=True), 3)
    assert load_job(repo).gate.kind is Gate.PLAN  # type: ignore[union-attr]


# -- 11. the guard in the loop -----------------------------------------------------------------

CODEMOD_TOUCHING_TESTS = '''import sys
from pathlib import Path

for name in sys.argv[1:]:
    path = Path(name)
    path.write_text(path.read_text().replace("old_sum(", "new_sum("))
tests = Path("tests/test_calc.py")
tests.write_text(tests.read_text() + "# touched by the codemod\\n")
'''

CODEMOD_NOOP = '''import sys

print("looked at", len(sys.argv) - 1, "files; nothing to do")
'''


def command_job(tmp_path: Path, script: str) -> Path:
    repo = build_sample(tmp_path / "repo", config=config_text(batches_per_milestone=4))
    (repo / "tools").mkdir()
    (repo / "tools/codemod.py").write_text(script)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "add the codemod")
    return repo


def test_guard_refuses_a_codemod_that_edits_tests(tmp_path: Path) -> None:
    repo = command_job(tmp_path, CODEMOD_TOUCHING_TESTS)
    spec = issue(recipe="command", replace=None, run="python tools/codemod.py {files}",
                 paths=["calc/alpha/*.py"], exclude=None)
    outcome = session(repo).run(spec, yes=True)
    assert_exit(outcome, 4)
    job = load_job(repo)
    assert job.gate is not None and job.gate.kind is Gate.FAILURE
    report = job.gate.report
    assert report is not None and report.code == "guard_refused"
    assert "tests/test_calc.py: test_edit" in report.evidence["violations"]
    assert "tests/test_calc.py" in report.message and "test_edit" in report.message
    assert "tests/test_calc.py" in outcome.message
    batch = job.batch(job.gate.batch)  # type: ignore[arg-type]
    # A guard refusal would come out the same again: one attempt, then the failure gate.
    assert batch.commit is None and len(batch.attempts) == 1
    assert "not retried" in job.gate.reason
    assert all(a.commands and a.commands[0].argv[:2] == ["python", "tools/codemod.py"]
               for a in batch.attempts)
    assert branch_head(repo, job.branch) == job.base_sha  # never committed


def test_codemod_that_changes_nothing_skips_the_batch(tmp_path: Path) -> None:
    repo = command_job(tmp_path, CODEMOD_NOOP)
    spec = issue(recipe="command", replace=None, find=None, run="python tools/codemod.py {files}",
                 paths=["calc/alpha/*.py"], exclude=None)
    outcome = session(repo).run(spec, yes=True)
    assert_exit(outcome, 0)
    job = load_job(repo)
    assert job.batches
    for batch in job.batches:
        assert batch.status is BatchStatus.SKIPPED
        assert batch.reason == "nothing to change"
        assert batch.commit is None
        assert "nothing to do" in batch.attempts[-1].commands[0].output_tail
    commits = branch_commits(repo, job)
    assert batch_commits(commits) == []  # never an empty commit
    note = show(repo, job.branch, job.note_path)
    assert "nothing to change" in note


# -- standing instructions ---------------------------------------------------------------------

def test_instructions_are_kept_in_the_record_and_the_note(tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo")
    local = session(repo)
    assert_exit(local.run(issue(), yes=False), 3)
    assert local.instruct("  keep the public names  ") == "instruction recorded (1 standing)"
    assert load_job(repo).instructions == ["keep the public names"]
    assert_exit(local.run(issue(), yes=True), 0)
    job = load_job(repo)
    note = show(repo, job.branch, job.note_path)
    assert "## Standing instructions" in note and "- keep the public names" in note
    with pytest.raises(RefusedError, match="already completed"):
        local.instruct("too late")


# -- validation really runs in the sandbox -----------------------------------------------------

PEEK = '''"""Fails when the sandbox lets validation see the job state or write to the user's checkout."""
import os
import sys
from pathlib import Path

worktree = Path.cwd()
state_dir = worktree.parent.parent  # <repo>/.git/stepwise/worktrees/issue-N
user_checkout = state_dir.parent.parent
problems = []
if list(state_dir.glob("issue-*.json")):
    problems.append("the progress file is visible")
try:
    (user_checkout / "written-by-validation.txt").write_text("oops")
    problems.append("the user's checkout is writable")
except OSError:
    pass
if any("TOKEN" in key or "SECRET" in key for key in os.environ):
    problems.append("a secret-looking variable reached the command")
print("; ".join(problems) or "isolated")
sys.exit(1 if problems else 0)
'''


@pytest.fixture
def outside_tmp() -> Iterator[Path]:
    """A directory outside /tmp (the sandbox replaces /tmp with its own, which would hide all)."""
    base = Path("/var/tmp")
    if not os.access(base, os.W_OK):
        pytest.skip("/var/tmp is not writable")
    path = Path(tempfile.mkdtemp(prefix="stepwise-e2e-", dir=base))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.mark.skipif(not bubblewrap_available(), reason="bubblewrap is not installed")
def test_validation_runs_isolated_from_state_and_checkout(
    outside_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_not_for_validation")
    repo = build_sample(outside_tmp / "repo",
                        config=config_text(validate=["python tools/peek.py", VALIDATE]))
    (repo / "tools").mkdir()
    (repo / "tools/peek.py").write_text(PEEK)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "add the isolation probe")
    outcome = session(repo).run(issue(), yes=True)
    job = load_job(repo)
    probe = job.baseline[0]
    assert probe.isolated and probe.output_tail.strip() == "isolated", probe.output_tail
    assert_exit(outcome, 0)
    assert not (repo / "written-by-validation.txt").exists()
    for batch in job.batches:
        assert [c.exit_code for c in batch.attempts[-1].commands] == [0, 0]


# -- batch gates: large_change and scope -------------------------------------------------------

def test_large_change_gate_approve_commits_and_skip_records_the_reason(tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo",
                        config=config_text(max_batch_lines=3, batches_per_milestone=4))
    local = session(repo)
    outcome = local.run(issue(), yes=True)  # --yes never passes a large_change gate
    assert_exit(outcome, 3)
    job = load_job(repo)
    assert job.gate is not None and job.gate.kind is Gate.LARGE_CHANGE and job.gate.batch == 1
    assert "4 lines" in job.gate.reason
    assert branch_head(repo, job.branch) == job.base_sha
    assert_exit(local.verb(Verb.APPROVE)[1], 3)  # batch 1 committed; batch 2 is large too
    assert_exit(local.verb(Verb.SKIP, reason="too big to review today")[1], 3)
    assert_exit(local.verb(Verb.APPROVE)[1], 0)
    job = load_job(repo)
    assert [b.status for b in job.batches] == [BatchStatus.COMPLETED, BatchStatus.SKIPPED,
                                               BatchStatus.COMPLETED]
    assert job.batch(1).approved_gates == [Gate.LARGE_CHANGE]
    assert [c.trailers["Stepwise-Batch"] for c in batch_commits(branch_commits(repo, job))] \
        == ["1", "3"]
    assert "- batch 2: too big to review today" in show(repo, job.branch, job.note_path)


CODEMOD_WIDER = '''import sys
from pathlib import Path

for name in [*sys.argv[1:], "calc/gamma/stats.py"]:
    path = Path(name)
    path.write_text(path.read_text().replace("old_sum(", "new_sum("))
'''


def test_scope_gate_approve_accepts_the_wider_batch(tmp_path: Path) -> None:
    repo = command_job(tmp_path, CODEMOD_WIDER)
    local = session(repo)
    spec = issue(recipe="command", replace=None, run="python tools/codemod.py {files}")
    outcome = local.run(spec, yes=True)
    assert_exit(outcome, 3)
    job = load_job(repo)
    assert job.gate is not None and job.gate.kind is Gate.SCOPE and job.gate.batch == 1
    assert "calc/gamma/stats.py: outside_batch_in_scope" in outcome.message
    assert branch_head(repo, job.branch) == job.base_sha
    assert_exit(local.verb(Verb.RETRY)[1], 3)  # the same edit: the same gate
    assert_exit(local.verb(Verb.APPROVE)[1], 0)
    job = load_job(repo)
    first = batch_commits(branch_commits(repo, job))[0]
    assert "calc/gamma/stats.py" in changed_paths(repo, first.sha)
    assert all(b.status is BatchStatus.COMPLETED for b in job.batches)
    assert git(repo, "grep", "-n", "-P", FIND, job.branch, "--", "calc", ":!calc/legacy.py",
               check=False) == ""


def test_require_plan_approval_false_starts_without_the_plan_gate(tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo", config=config_text(require_plan_approval=False))
    outcome = session(repo).run(issue(), yes=False)
    assert_exit(outcome, 3)
    job = load_job(repo)
    assert job.gate is not None and job.gate.kind is Gate.MILESTONE  # went straight to work
    assert job.approved_digest == job.spec_digest
    assert not any("plan-" in e.message for e in job.events if e.kind == "gate")


def test_require_plan_approval_false_still_stops_for_a_failing_baseline(tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo", failing_baseline=True,
                        config=config_text(require_plan_approval=False))
    outcome = session(repo).run(issue(), yes=True)
    assert_exit(outcome, 3)
    job = load_job(repo)
    assert job.gate is not None and job.gate.kind is Gate.PLAN
    assert branch_head(repo, job.branch) == job.base_sha
