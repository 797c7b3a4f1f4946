"""The base merges a local job's record knows against the ones on its branch: a maintainer's
own merge of the base (one human commit, nothing more to merge), a Stepwise merge the record
lost (found again by its trailers, not made twice), and a merge whose push is refused (no merge
recorded, the human-commit gate).

Real temporary repositories and real validation (the sample's unittest suite in the sandbox);
the base branch is the user's checkout branch `main`, moved by committing on it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from jobs.basics.errors import WorkspaceError
from jobs.features.base_moves.record import moves
from jobs.kernel.gates import Verb
from jobs.kernel.model import Gate, JobStatus
from tests.jobs.features.base_moves.kit import at_milestone, job_branch_commits, merge_commits, move_base
from tests.kit.local_e2e import assert_exit, build_sample, config_text, edit_state, issue, load_job, session
from tests.kit.repos import git


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
    assert job.status is JobStatus.COMPLETED and moves(job).merges == []


def test_a_merge_on_the_branch_the_record_does_not_know_is_found_by_its_trailers(
        tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo", config=config_text(update_from_base="behind"))
    at_milestone(repo)
    head = load_job(repo).head_sha
    base = move_base(repo, {"README.md": "# calc\n\nUnrelated news.\n"})
    assert_exit(session(repo).verb(Verb.APPROVE)[1], 0)
    merge = moves(load_job(repo)).merges[0].commit
    # Back to the record as it was before the merge (a restored backup, a lost save), with
    # the branch as it is: the merge and the batches after it are found, not made again.
    git(repo, "update-ref", f"refs/heads/{load_job(repo).branch}", merge)

    def before_the_merge(data: dict[str, object]) -> None:
        data.update(head_sha=head, status="running", gate=None, final_review=None)
        data["parts"].pop("base_moves")  # type: ignore[attr-defined]
        for batch in data["batches"]:  # type: ignore[attr-defined]
            if batch["number"] == 3:
                batch.update(status="pending", commit=None, attempts=[], changed_files=[])

    edit_state(repo, before_the_merge)
    assert_exit(session(repo).run(issue(), yes=True), 0)
    job = load_job(repo)
    assert [(m.base_sha, m.commit, m.found) for m in moves(job).merges] == [(base, merge, True)]
    assert len(merge_commits(job_branch_commits(repo))) == 1


def test_a_refused_merge_push_leaves_no_merge_in_the_record(tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo", config=config_text(update_from_base="behind"))
    at_milestone(repo)
    job = load_job(repo)
    move_base(repo, {"README.md": "# calc\n\nUnrelated news.\n"})
    local = session(repo)
    real = local.services.repository.advance_branch

    def someone_pushed_first(branch: str, new: str, old: str) -> str:
        git(repo, "update-ref", f"refs/heads/{branch}", git(repo, "commit-tree", "-p", old, "-m",
                                                             "a human", f"{old}^{{tree}}"), old)
        return real(branch, new, old)

    local.services.repository.advance_branch = someone_pushed_first  # type: ignore[method-assign]
    with pytest.raises(WorkspaceError):
        local.verb(Verb.APPROVE)
    assert moves(load_job(repo)).merges == []
    assert_exit(session(repo).run(issue(), yes=False), 4)
    job = load_job(repo)
    assert job.gate is not None and job.gate.kind is Gate.HUMAN_COMMIT
    assert moves(job).merges == [] and merge_commits(job_branch_commits(repo)) == []
