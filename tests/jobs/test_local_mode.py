"""End-to-end tests of local mode on real temporary git repositories: a realistic job from plan
to note, a re-run after completion, standing instructions (its gates: test_local_gates.py;
the guard and the sandbox in the loop: test_local_guard.py).

Validation commands really run (through bubblewrap when available); the engine is driven
in-process through `LocalSession`, the way the CLI drives it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from jobs.adapters.workspace import CommitInfo
from jobs.engine.engine import Outcome
from jobs.kernel.gates import RefusedError, Verb
from jobs.kernel.model import BatchStatus, JobStatus
from jobs.ports import Publication
from tests.kit.local_e2e import (
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
    assert len(note_commits(commits)) == 0  # `notes: at_end` (the default): none before the end
    assert len(commits) == 2  # the milestone gate's head is its last batch's commit


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
    assert len(notes) == 1  # `notes: at_end` (the default): the final note only
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
