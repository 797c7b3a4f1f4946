"""When the base branch moves under a local job with no conflict: nothing (`conflicted`), a
validated merge (`behind`, or a base whose protection requires up-to-date branches), a merge
that breaks validation, a revert after a merge, a worker killed mid-merge, and what `run` says.

Real temporary repositories and real validation (the sample's unittest suite in the sandbox);
the base branch is the user's checkout branch `main`, moved by committing on it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from jobs.adapters.workspace import Repository
from jobs.features.base_moves.record import moves
from jobs.kernel.gates import Verb
from jobs.kernel.job import Job
from jobs.kernel.model import BatchStatus, Gate, JobStatus
from jobs.ports import CiReport, Publication
from tests.jobs.features.base_moves.kit import at_milestone, job_branch_commits, merge_commits, move_base
from tests.kit.forge import InMemoryForge
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
    issue,
    load_job,
    session,
    show,
    write_issue,
)
from tests.kit.repos import git


def test_conflicted_does_nothing_for_an_unrelated_base_commit(tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo")
    at_milestone(repo)
    base = move_base(repo, {"README.md": "# calc\n\nUnrelated news.\n"})
    recorder = Recorder()
    assert_exit(session(repo, sink=recorder).verb(Verb.APPROVE)[1], 0)
    job = load_job(repo)
    assert job.status is JobStatus.COMPLETED
    assert moves(job).merges == []
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
    [merge] = moves(job).merges
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
    assert [m.base_sha for m in moves(job).merges] == [base]
    assert any("requires up-to-date branches" in text
               for text in forge.published(Publication.NOTICE))


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
    assert moves(job).merges == []
    # approve: go on without that base commit; the final review still shows it fails.
    assert_exit(session(repo).verb(Verb.APPROVE)[1], 4)
    job = load_job(repo)
    assert moves(job).merges == [] and job.gate is not None
    assert job.gate.report is not None and job.gate.report.code == "final_review_failed"


def test_reverting_a_batch_after_a_base_merge(tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo", config=config_text(update_from_base="behind"))
    at_milestone(repo)
    move_base(repo, {"README.md": "# calc\n\nUnrelated news.\n"})
    assert_exit(session(repo).verb(Verb.APPROVE)[1], 0)
    job = load_job(repo)
    [merge] = moves(job).merges
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
    assert moves(load_job(repo)).merges == moves(job).merges


def test_a_worker_killed_during_a_merge_resumes_without_a_second_merge(tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo", config=config_text(update_from_base="behind"))
    at_milestone(repo)
    base = move_base(repo, {"README.md": "# calc\n\nUnrelated news.\n"})
    local = session(repo)
    real = local.services.repository.advance_branch

    def killed_after_the_push(branch: str, new: str, old: str) -> str:
        landed = real(branch, new, old)
        if len(git(repo, "rev-list", "--parents", "-n1", new).split()) == 3:
            raise KeyboardInterrupt  # the worker dies between the push and the next save
        return landed

    local.services.repository.advance_branch = killed_after_the_push  # type: ignore[method-assign]
    with pytest.raises(KeyboardInterrupt):
        local.verb(Verb.APPROVE)
    stored = load_job(repo)
    assert len(moves(stored).merges) == 1 and stored.head_sha != moves(stored).merges[0].commit
    assert_exit(session(repo).run(issue(), yes=True), 0)
    job = load_job(repo)
    assert [m.base_sha for m in moves(job).merges] == [base]
    assert len(merge_commits(job_branch_commits(repo))) == 1
    assert all(b.status is BatchStatus.COMPLETED for b in job.batches)
    assert job.gate is None and job.status is JobStatus.COMPLETED


def test_the_cli_run_says_the_base_moved_and_merges_it(tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo", config=config_text(update_from_base="behind"))
    issue_file = write_issue(tmp_path / "issue.md")
    assert cli("run", "--repo", repo, "--issue", issue_file, "--number", NUMBER).code == 3
    assert cli("approve", "--repo", repo, "--number", NUMBER).code == 3  # milestone 1
    base = move_base(repo, {"README.md": "# calc\n\nUnrelated news.\n"})
    done = cli("run", "--repo", repo, "--issue", issue_file, "--number", NUMBER, "--yes")
    assert done.code == 0, done.text
    assert f"main moved to {base[:7]}" in done.text and "merging it into" in done.text
    assert [m.base_sha for m in moves(load_job(repo)).merges] == [base]


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
    assert moves(load_job(repo)).merges == []
