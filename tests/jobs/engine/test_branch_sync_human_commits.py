"""A person's commit accepted at the `human_commit` gate stays in the record, end to end on a
real repository in local mode: push a commit to the job branch at a gate, approve it, finish;
the committed change note lists it under "Commits by people" with its sha, subject, author and
files, and the note's count matches `tally`; what is read of a large commit and a merge."""

from __future__ import annotations

from pathlib import Path

from jobs.adapters.workspace import Repository
from jobs.engine.branch_sync import read_commit
from jobs.kernel.gates import Verb
from jobs.kernel.human_commits import KEPT_FILES
from jobs.kernel.model import Gate, JobStatus
from jobs.notes.tally import tally
from tests.jobs.engine.recovery_kit import at_first_milestone, human_clone
from tests.kit.local_e2e import assert_exit, load_job, session, show
from tests.kit.repos import commit_all, git, make_repo, write_files

AUTHOR = "Ada Lovelace <12345+ada-l@users.noreply.github.com>"


def test_an_accepted_human_commit_is_listed_in_the_note(tmp_path: Path) -> None:
    repo = at_first_milestone(tmp_path)
    job = load_job(repo)
    clone = human_clone(repo, tmp_path, job.branch)
    (clone / "README.md").write_text("# calc\n\nEdited by a human.\n")
    (clone / "NOTES.txt").write_text("a new file\n")
    git(clone, "add", "-A")
    git(clone, "commit", "-q", f"--author={AUTHOR}", "-m", "docs: a human edit")
    human_sha = git(clone, "rev-parse", "HEAD")
    git(clone, "push", "-q", "origin", f"HEAD:{job.branch}")

    outcome = session(repo).verb(Verb.APPROVE)[1]  # the milestone gate: the push is found
    assert_exit(outcome, 4)
    job = load_job(repo)
    assert job.gate is not None and job.gate.kind is Gate.HUMAN_COMMIT
    assert job.human_commits == []  # not accepted yet: nothing is recorded

    assert_exit(session(repo).verb(Verb.APPROVE)[1], 0)  # accept it, and finish
    job = load_job(repo)
    assert job.status is JobStatus.COMPLETED
    [recorded] = job.human_commits
    assert (recorded.sha, recorded.subject) == (human_sha, "docs: a human edit")
    assert (recorded.author, recorded.login) == ("Ada Lovelace", "ada-l")
    assert recorded.files == ["NOTES.txt", "README.md"]
    assert tally(job).by_people == 1
    assert any(e.kind == "human_commit" and human_sha[:7] in e.message for e in job.events)

    note = show(repo, job.branch, job.note_path)
    section = note.split("## Commits by people", 1)[1].split("\n## ", 1)[0]
    assert f"`{human_sha[:7]}` docs: a human edit" in section
    assert "Ada Lovelace" in section and "`NOTES.txt`, `README.md`" in section
    assert "1 commit by a person" in note  # the count on the note's batches line


def test_a_large_commit_keeps_a_bounded_list_and_a_merge_counts_against_its_first_parent(
        tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    write_files(repo, {f"gen/f{i:03}.txt": f"{i}\n" for i in range(KEPT_FILES + 5)})
    big = commit_all(repo, "chore: generate files")
    read = read_commit(Repository(repo), big)
    assert read.files == sorted(read.files) and len(read.files) == KEPT_FILES
    assert read.more_files == 5 and read.subject == "chore: generate files"
    git(repo, "checkout", "-q", "-b", "side", "HEAD~1")
    write_files(repo, {"side.txt": "side\n"})
    commit_all(repo, "side work")
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-edit", "side")
    merge = read_commit(Repository(repo), git(repo, "rev-parse", "HEAD"))
    assert merge.files == ["side.txt"]  # what the merge brought onto the branch


def test_a_person_s_commit_in_an_accepted_rewrite_is_listed(tmp_path: Path) -> None:
    repo = at_first_milestone(tmp_path)
    job = load_job(repo)
    first = job.batch(1).commit
    assert first is not None
    clone = human_clone(repo, tmp_path, job.branch)
    git(clone, "reset", "-q", "--hard", first)  # drop batch 2 and the note, add a commit
    (clone / "README.md").write_text("# calc\n\nRewritten by a human.\n")
    git(clone, "commit", "-q", f"--author={AUTHOR}", "-am", "docs: after a rewrite")
    human_sha = git(clone, "rev-parse", "HEAD")
    git(clone, "push", "-q", "--force", "origin", f"HEAD:{job.branch}")

    assert_exit(session(repo).verb(Verb.APPROVE)[1], 4)  # the rewrite: human_commit gate
    assert_exit(session(repo).verb(Verb.APPROVE)[1], 0)
    job = load_job(repo)
    assert [(c.sha, c.subject, c.files) for c in job.human_commits] == [
        (human_sha, "docs: after a rewrite", ["README.md"])]  # batch 1 (ours) is not listed
    assert f"`{human_sha[:7]}` docs: after a rewrite" in show(repo, job.branch, job.note_path)
