"""When the base branch moves under a local job: nothing, a validated merge, a replayed batch,
the `conflict` gate, a failing merge, a revert after a merge, a worker killed mid-merge.

Real temporary repositories and real validation (the sample's unittest suite in the sandbox);
the base branch is the user's checkout branch `main`, moved by committing on it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.demo.scripted_llm import ScriptedServer
from jobs.adapters.workspace import CommitInfo, Repository
from jobs.domain.errors import WorkspaceError
from jobs.domain.gates import Verb
from jobs.domain.job import Job
from jobs.domain.model import BatchStatus, Gate, JobStatus
from jobs.ports import CiReport, Publication
from tests.kit.forge import InMemoryForge
from tests.kit.llm import good_reply, llm_issue, llm_session
from tests.kit.local_e2e import (
    NUMBER,
    Recorder,
    assert_exit,
    batch_commits,
    branch_commits,
    branch_head,
    build_sample,
    cli,
    config_text,
    edit_state,
    issue,
    load_job,
    module_source,
    run_tests_at,
    session,
    show,
    write_issue,
)
from tests.kit.repos import commit_all, git, write_files

AREA = "calc/alpha/area.py"


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    with ScriptedServer() as scripted:
        yield scripted


def move_base(repo: Path, files: dict[str, str | bytes], message: str = "base moves") -> str:
    """Commit `files` on `main`, the branch the job started from (the user's checkout)."""
    write_files(repo, files)
    return commit_all(repo, message)


def merge_commits(commits: list[CommitInfo]) -> list[CommitInfo]:
    return [c for c in commits if "Stepwise-Base-Merge" in c.trailers]


def job_branch_commits(repo: Path) -> list[CommitInfo]:
    """The job branch's first-parent commits since the job started (base commits left out)."""
    job = load_job(repo)
    head = branch_head(repo, job.branch)
    assert head is not None
    base = git(repo, "rev-parse", "main")
    return Repository(repo).commits(job.base_sha, head, exclude=[base])


def at_milestone(repo: Path, recorder: Recorder | None = None) -> None:
    """Plan, approve: batches 1 and 2 are committed and the job waits at milestone 1."""
    local = session(repo, sink=recorder)
    assert_exit(local.run(issue(), yes=False), 3)
    assert_exit(local.verb(Verb.APPROVE)[1], 3)
    job = load_job(repo)
    assert job.gate is not None and job.gate.kind is Gate.MILESTONE


def test_conflicted_does_nothing_for_an_unrelated_base_commit(tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo")
    at_milestone(repo)
    base = move_base(repo, {"README.md": "# calc\n\nUnrelated news.\n"})
    recorder = Recorder()
    assert_exit(session(repo, sink=recorder).verb(Verb.APPROVE)[1], 0)
    job = load_job(repo)
    assert job.status is JobStatus.COMPLETED
    assert job.base_merges == []
    assert merge_commits(job_branch_commits(repo)) == []
    assert not Repository(repo).is_ancestor(base, job.head_sha)
    notices = recorder.texts(Publication.NOTICE)
    assert any(f"`main` moved to {base[:7]}" in n and "clean" in n for n in notices), notices
    assert job.final_review is not None and job.final_review.ok  # merged with the base


def test_behind_merges_an_unrelated_base_commit_in_a_validated_merge_commit(
        tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo", config=config_text(update_from_base="behind"))
    at_milestone(repo)
    head_before = load_job(repo).head_sha
    base = move_base(repo, {"README.md": "# calc\n\nUnrelated news.\n"})
    recorder = Recorder()
    assert_exit(session(repo, sink=recorder).verb(Verb.APPROVE)[1], 0)
    job = load_job(repo)
    assert job.status is JobStatus.COMPLETED
    [merge] = job.base_merges
    assert merge.base_sha == base and merge.by == "stepwise" and merge.replayed == []
    assert [c.exit_code for c in merge.commands] == [0]  # validated like a batch
    [commit] = merge_commits(job_branch_commits(repo))
    assert commit.sha == merge.commit
    assert commit.parents == (head_before, base)  # job head first, never a rebase
    assert commit.subject == f"stepwise(#7): merge main ({base[:7]})"
    assert commit.trailers == {"Stepwise-Job": job.id, "Stepwise-Base-Merge": base}
    assert show(repo, job.branch, "README.md") == "# calc\n\nUnrelated news."
    # The merge is no batch: every batch commit is still the only one of its batch.
    assert len(batch_commits(branch_commits(repo, job))) == len(job.batches)
    assert any("merging it into" in n for n in recorder.texts(Publication.NOTICE))
    note = show(repo, job.branch, job.note_path)
    assert "## Base merges" in note and f"`{merge.commit[:7]}`" in note


def test_a_conflict_in_a_replace_batch_is_replayed_on_the_base_version(tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo")
    at_milestone(repo)
    job = load_job(repo)
    owner = next(b for b in job.batches if AREA in b.files)
    assert owner.status is BatchStatus.COMPLETED
    # The line next to the batch's edit changes on the base: a textual conflict.
    moved = module_source(AREA).replace("def area():", "def area():  # width plus height")
    base = move_base(repo, {AREA: moved})
    conflicts = git(repo, "merge-tree", "--write-tree", "--name-only", "--no-messages",
                    job.head_sha, base, check=False).splitlines()[1:]
    assert conflicts == [AREA]  # a plain merge would conflict
    recorder = Recorder()
    assert_exit(session(repo, sink=recorder).verb(Verb.APPROVE)[1], 0)
    job = load_job(repo)
    [merge] = job.base_merges
    [replayed] = merge.replayed
    assert replayed.batch == owner.number and replayed.files == [AREA]
    assert AREA in replayed.reason
    merged = show(repo, merge.commit, AREA)
    assert "# width plus height" in merged and "legacy.new_sum(2, 3)" in merged
    assert "<<<<<<<" not in merged and "old_sum" not in merged
    assert [c.exit_code for c in merge.commands] == [0]
    assert job.status is JobStatus.COMPLETED and job.final_review is not None
    assert job.final_review.ok
    assert Repository(repo).is_ancestor(base, job.head_sha)
    note = show(repo, job.branch, job.note_path)
    assert f"replayed batch {owner.number}" in note
    done = run_tests_at(repo, job.branch, tmp_path / "check")
    assert done.returncode == 0, done.stderr


def test_a_base_change_that_breaks_validation_stops_at_the_failure_gate(tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo", config=config_text(update_from_base="behind"))
    at_milestone(repo)
    head = load_job(repo).head_sha
    move_base(repo, {"tests/test_extra.py": "import unittest\n\n\nclass Extra(unittest.TestCase):"
                     "\n    def test_broken(self):\n        self.assertEqual(1, 2)\n"})
    outcome = session(repo).verb(Verb.APPROVE)[1]
    assert_exit(outcome, 4)
    job = load_job(repo)
    assert job.gate is not None and job.gate.kind is Gate.FAILURE
    report = job.gate.report
    assert report is not None and report.code == "base_merge_failed"
    assert "test_broken" in str(report.evidence["output_tail"])
    assert report.evidence["exit_code"] != 0
    assert branch_head(repo, job.branch) == head  # nothing pushed
    assert job.base_merges == []
    # approve: go on without that base commit; the final review still shows it fails.
    assert_exit(session(repo).verb(Verb.APPROVE)[1], 4)
    job = load_job(repo)
    assert job.base_merges == [] and job.gate is not None
    assert job.gate.report is not None and job.gate.report.code == "final_review_failed"


def test_reverting_a_batch_after_a_base_merge(tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo", config=config_text(update_from_base="behind"))
    at_milestone(repo)
    move_base(repo, {"README.md": "# calc\n\nUnrelated news.\n"})
    assert_exit(session(repo).verb(Verb.APPROVE)[1], 0)
    job = load_job(repo)
    [merge] = job.base_merges
    message, _ = session(repo).revert(1)
    job = load_job(repo)
    assert job.batch(1).status is BatchStatus.REVERTED, message
    assert job.batch(1).revert_ok is True
    for path in job.batch(1).files:
        assert "legacy.old_sum(" in show(repo, job.branch, path)
    assert show(repo, job.branch, "README.md") == "# calc\n\nUnrelated news."
    assert merge.commit in git(repo, "rev-list", job.branch)
    # A rerun finds nothing new to do: the merge is not mistaken for a batch or a human commit.
    assert_exit(session(repo).run(issue(), yes=True), 0)
    assert load_job(repo).base_merges == job.base_merges


def test_a_worker_killed_during_a_merge_resumes_without_a_second_merge(tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo", config=config_text(update_from_base="behind"))
    at_milestone(repo)
    base = move_base(repo, {"README.md": "# calc\n\nUnrelated news.\n"})
    local = session(repo)
    real = local.services.repository.advance_branch

    def killed_after_the_push(branch: str, new: str, old: str) -> None:
        real(branch, new, old)
        if len(git(repo, "rev-list", "--parents", "-n1", new).split()) == 3:
            raise KeyboardInterrupt  # the worker dies between the push and the next save

    local.services.repository.advance_branch = killed_after_the_push  # type: ignore[method-assign]
    with pytest.raises(KeyboardInterrupt):
        local.verb(Verb.APPROVE)
    stored = load_job(repo)
    assert len(stored.base_merges) == 1 and stored.head_sha != stored.base_merges[0].commit
    assert_exit(session(repo).run(issue(), yes=True), 0)
    job = load_job(repo)
    assert [m.base_sha for m in job.base_merges] == [base]
    assert len(merge_commits(job_branch_commits(repo))) == 1
    assert all(b.status is BatchStatus.COMPLETED for b in job.batches)
    assert job.gate is None and job.status is JobStatus.COMPLETED


def test_an_llm_batch_conflict_opens_the_conflict_gate_until_a_human_merges(
        tmp_path: Path, server: ScriptedServer) -> None:
    repo = build_sample(tmp_path / "repo", config=config_text(batch_size=1,
                                                              batches_per_milestone=1))
    server.add(good_reply(repo, [AREA]), good_reply(repo, ["calc/alpha/perimeter.py"]))
    recorder = Recorder()
    local = llm_session(repo, server, recorder)
    task = llm_issue()
    assert_exit(local.run(task, yes=False), 3)
    assert_exit(local.verb(Verb.APPROVE)[1], 3)  # milestone 1: batch 1 (area.py) committed
    job = load_job(repo)
    assert job.batch(1).files == [AREA] and job.batch(1).status is BatchStatus.COMPLETED
    moved = module_source(AREA).replace("def area():", "def area():  # width plus height")
    base = move_base(repo, {AREA: moved})

    outcome = local.verb(Verb.APPROVE)[1]
    assert_exit(outcome, 4)
    job = load_job(repo)
    assert job.gate is not None and job.gate.kind is Gate.CONFLICT
    assert AREA in job.gate.reason and "`llm` batch" in job.gate.reason
    assert "git merge main" in job.gate.reason
    assert job.base_conflict is not None and job.base_conflict.files == [AREA]
    head = job.head_sha
    assert branch_head(repo, job.branch) == head  # nothing merged by Stepwise
    # Approved before anyone merged: the gate opens again and says why.
    assert_exit(local.verb(Verb.APPROVE)[1], 4)
    job = load_job(repo)
    assert job.gate is not None and job.gate.kind is Gate.CONFLICT
    assert "does not hold the merge yet" in job.gate.reason

    # A maintainer merges on the branch and resolves the conflict, then approves.
    git(repo, "switch", "-q", job.branch)
    git(repo, "merge", "-q", "main", "-m", "merge main", check=False)
    resolved = moved.replace("legacy.old_sum(", "legacy.new_sum(")
    (repo / AREA).write_text(resolved)
    commit_all(repo, "merge main into the job branch")
    human = git(repo, "rev-parse", "HEAD")
    git(repo, "switch", "-q", "main")

    outcome = local.verb(Verb.APPROVE)[1]
    assert_exit(outcome, 0)
    job = load_job(repo)
    assert job.status is JobStatus.COMPLETED
    assert [(m.base_sha, m.commit, m.by) for m in job.base_merges] == [(base, human, "human")]
    assert job.base_conflict is None
    assert all(g.kind is not Gate.HUMAN_COMMIT for g in [job.gate] if g)
    assert not any(e.message.startswith("human_commit") for e in job.events)
    assert job.batch(2).status is BatchStatus.COMPLETED
    assert show(repo, job.branch, AREA) + "\n" == resolved


def test_the_cli_run_says_the_base_moved_and_merges_it(tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo", config=config_text(update_from_base="behind"))
    issue_file = write_issue(tmp_path / "issue.md")
    assert cli("run", "--repo", repo, "--issue", issue_file, "--number", NUMBER).code == 3
    assert cli("approve", "--repo", repo, "--number", NUMBER).code == 3  # milestone 1
    base = move_base(repo, {"README.md": "# calc\n\nUnrelated news.\n"})
    done = cli("run", "--repo", repo, "--issue", issue_file, "--number", NUMBER, "--yes")
    assert done.code == 0, done.text
    assert f"main moved to {base[:7]}" in done.text and "merging it into" in done.text
    assert [m.base_sha for m in load_job(repo).base_merges] == [base]


CODEMOD = '''import sys
from pathlib import Path

for name in sys.argv[1:]:
    path = Path(name)
    path.write_text(path.read_text().replace("old_sum(", "new_sum("))
'''


def test_a_conflict_in_a_command_batch_replays_the_codemod_on_those_files_only(
        tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo")
    write_files(repo, {"tools/codemod.py": CODEMOD})
    commit_all(repo, "add the codemod")
    task = issue(recipe="command", replace=None, run="python tools/codemod.py {files}")
    local = session(repo)
    assert_exit(local.run(task, yes=False), 3)
    assert_exit(local.verb(Verb.APPROVE)[1], 3)  # milestone 1
    job = load_job(repo)
    owner = next(b for b in job.batches if AREA in b.files)
    assert owner.status is BatchStatus.COMPLETED and len(owner.files) == 2
    moved = module_source(AREA).replace("def area():", "def area():  # width plus height")
    move_base(repo, {AREA: moved})
    assert_exit(session(repo).verb(Verb.APPROVE)[1], 0)
    job = load_job(repo)
    [merge] = job.base_merges
    [replayed] = merge.replayed
    assert replayed.batch == owner.number and replayed.files == [AREA]
    [ran] = replayed.commands
    assert ran.argv == ["python", "tools/codemod.py", AREA] and ran.exit_code == 0
    merged = show(repo, merge.commit, AREA)
    assert "# width plus height" in merged and "legacy.new_sum(2, 3)" in merged
    note = show(repo, job.branch, job.note_path)
    assert f"replay of batch {owner.number}: `python tools/codemod.py {AREA}` → exit 0" in note


def test_a_replay_the_guard_refuses_pushes_nothing_and_stops_at_the_failure_gate(
        tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo")
    # On the base's new version only, the codemod also edits the tests: the guard refuses that.
    sneaky = CODEMOD + ('''\nif "width" in Path(sys.argv[1]).read_text():\n'''
                        '''    Path("tests/test_calc.py").write_text("# gone\\n")\n''')
    write_files(repo, {"tools/codemod.py": sneaky})
    commit_all(repo, "add the codemod")
    task = issue(recipe="command", replace=None, run="python tools/codemod.py {files}")
    local = session(repo)
    assert_exit(local.run(task, yes=False), 3)
    assert_exit(local.verb(Verb.APPROVE)[1], 3)
    head = load_job(repo).head_sha
    move_base(repo, {AREA: module_source(AREA).replace("def area():", "def area():  # width")})
    assert_exit(session(repo).verb(Verb.APPROVE)[1], 4)
    job = load_job(repo)
    assert job.gate is not None and job.gate.kind is Gate.FAILURE
    assert job.gate.report is not None and job.gate.report.code == "base_merge_failed"
    assert "diff guard" in job.gate.report.message
    assert "tests/test_calc.py" in job.gate.report.message
    assert branch_head(repo, job.branch) == head and job.base_merges == []


def test_a_maintainers_own_merge_of_the_base_is_one_commit_at_the_human_commit_gate(
        tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo")
    at_milestone(repo)
    job = load_job(repo)
    for n in range(3):
        move_base(repo, {f"docs/news-{n}.md": f"news {n}\n"}, f"base news {n}")
    git(repo, "switch", "-q", job.branch)
    git(repo, "merge", "-q", "--no-edit", "main")
    human = git(repo, "rev-parse", "HEAD")
    git(repo, "switch", "-q", "main")
    assert_exit(session(repo).verb(Verb.APPROVE)[1], 4)
    job = load_job(repo)
    assert job.gate is not None and job.gate.kind is Gate.HUMAN_COMMIT
    assert "1 commit(s) by someone else" in job.gate.reason and human[:7] in job.gate.reason
    assert "base news" not in job.gate.reason  # the base's own commits are not the branch's
    assert_exit(session(repo).verb(Verb.APPROVE)[1], 0)  # continue on top: nothing to merge
    job = load_job(repo)
    assert job.status is JobStatus.COMPLETED and job.base_merges == []


def test_a_merge_on_the_branch_the_record_does_not_know_is_found_by_its_trailers(
        tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo", config=config_text(update_from_base="behind"))
    at_milestone(repo)
    head = load_job(repo).head_sha
    base = move_base(repo, {"README.md": "# calc\n\nUnrelated news.\n"})
    assert_exit(session(repo).verb(Verb.APPROVE)[1], 0)
    merge = load_job(repo).base_merges[0].commit
    # Back to the record as it was before the merge (a restored backup, a lost save), with
    # the branch as it is: the merge and the batches after it are found, not made again.
    git(repo, "update-ref", f"refs/heads/{load_job(repo).branch}", merge)

    def before_the_merge(data: dict[str, object]) -> None:
        data.update(head_sha=head, base_merges=[], base_checked=None, status="running",
                    gate=None, final_review=None)
        for batch in data["batches"]:  # type: ignore[attr-defined]
            if batch["number"] == 3:
                batch.update(status="pending", commit=None, attempts=[], changed_files=[])

    edit_state(repo, before_the_merge)
    assert_exit(session(repo).run(issue(), yes=True), 0)
    job = load_job(repo)
    assert [(m.base_sha, m.commit, m.found) for m in job.base_merges] == [(base, merge, True)]
    assert len(merge_commits(job_branch_commits(repo))) == 1


def test_run_at_a_gate_says_the_base_moved(tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo")
    at_milestone(repo)
    assert_exit(session(repo).run(issue(), yes=False), 3)
    recorder = Recorder()
    base = move_base(repo, {"README.md": "# calc\n\nUnrelated news.\n"})
    outcome = session(repo, sink=recorder).run(issue(), yes=False)
    assert_exit(outcome, 3)  # still at the milestone gate: nothing merged, but said
    [notice] = recorder.texts(Publication.NOTICE)
    assert f"`main` moved to {base[:7]}" in notice and "update_from_base: conflicted" in notice
    assert load_job(repo).base_merges == []


class StrictForge(InMemoryForge):
    """A forge whose base branch requires up-to-date branches (GitHub's strict protection)."""

    def ci_report(self, job: Job, sha: str) -> CiReport | None:
        return CiReport(strict=True)


def test_conflicted_merges_a_clean_base_when_its_protection_requires_up_to_date(
        tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo")
    at_milestone(repo)
    base = move_base(repo, {"README.md": "# calc\n\nUnrelated news.\n"})
    local = session(repo)
    forge = StrictForge()
    local.services.forge = forge
    assert_exit(local.verb(Verb.APPROVE)[1], 0)
    job = load_job(repo)
    assert [m.base_sha for m in job.base_merges] == [base]
    assert any("requires up-to-date branches" in text
               for text in forge.published(Publication.NOTICE))


def test_a_refused_merge_push_leaves_no_merge_in_the_record(tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo", config=config_text(update_from_base="behind"))
    at_milestone(repo)
    job = load_job(repo)
    move_base(repo, {"README.md": "# calc\n\nUnrelated news.\n"})
    local = session(repo)
    real = local.services.repository.advance_branch

    def someone_pushed_first(branch: str, new: str, old: str) -> None:
        git(repo, "update-ref", f"refs/heads/{branch}", git(repo, "commit-tree", "-p", old, "-m",
                                                             "a human", f"{old}^{{tree}}"), old)
        real(branch, new, old)

    local.services.repository.advance_branch = someone_pushed_first  # type: ignore[method-assign]
    with pytest.raises(WorkspaceError):
        local.verb(Verb.APPROVE)
    assert load_job(repo).base_merges == []
    assert_exit(session(repo).run(issue(), yes=False), 4)
    job = load_job(repo)
    assert job.gate is not None and job.gate.kind is Gate.HUMAN_COMMIT
    assert job.base_merges == [] and merge_commits(job_branch_commits(repo)) == []
