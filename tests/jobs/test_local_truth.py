"""What a job leaves for a human, told truly through the real `stepwise` CLI (issue 41.6): a revert
in a job whose spec names only `paths` (a `command` recipe, no `find`) lists the files it undid,
by batch, in the revert's answer, the change note and the progress card; a `find` that matches
nothing is refused before anything is created, saying what was searched and where."""

from __future__ import annotations

from pathlib import Path

from tests.jobs.test_local_exact_counts import command_job
from tests.kit.local_e2e import (
    NUMBER,
    build_sample,
    cli,
    load_job,
    show,
    state_path,
    stepwise_branches,
    write_issue,
)
from tests.kit.repos import git


def test_a_revert_in_a_paths_only_job_lists_the_files_it_undid(tmp_path: Path) -> None:
    repo, _ = command_job(tmp_path)  # `paths` and a codemod, no `find`; completed with --yes
    job = load_job(repo)
    note = show(repo, job.branch, job.note_path)
    assert "## Leftovers for a human to confirm\n\n- none\n" in note

    reverted = cli("revert", "--repo", repo, "--number", str(NUMBER), "2")
    assert reverted.code == 0, reverted.text
    job = load_job(repo)
    revert = job.batch(2).revert_commit
    assert revert is not None
    said = " ".join(reverted.out.split())
    assert (f"batch 2 reverted in {revert[:7]}; the reverted head passes validation; its change "
            "to 2 files is undone (calc/beta/score.py, calc/beta/total.py), listed as "
            "leftovers for a human to confirm") in said, reverted.text
    assert f"job completed with leftovers; change note {job.note_path}" in said

    note = show(repo, job.branch, job.note_path)
    leftovers = note.split("## Leftovers for a human to confirm\n\n", 1)[1].split("\n\n", 1)[0]
    assert leftovers.splitlines() == [
        f"- `calc/beta/score.py` — batch 2's change to it was reverted (`{revert[:7]}`)",
        f"- `calc/beta/total.py` — batch 2's change to it was reverted (`{revert[:7]}`)"]
    assert "status `completed with leftovers`" in note
    assert "files: 2 committed, 2 reverted; 2 leftovers for a human" in note

    status = cli("status", "--repo", repo, "--number", str(NUMBER))
    card = " ".join(status.out.split())
    assert "Status: completed with leftovers" in card, status.text
    assert "Files: 2 committed, 2 reverted; 2 leftovers for a human" in card


def test_a_find_that_matches_nothing_starts_nothing_and_says_what_was_searched(
        tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo")
    head = git(repo, "rev-parse", "HEAD").strip()
    issue = write_issue(tmp_path / "issue.md", find=[r"\bno_such_call\("])
    done = cli("run", "--repo", repo, "--issue", issue, "--number", str(NUMBER))
    assert done.code == 2, done.text
    said = " ".join(done.err.split())
    assert ("nothing to change: spec field `find` (`\\bno_such_call\\(`) matches nothing in the "
            "10 files spec field `paths` (`calc/**/*.py`) selects, excluding `calc/legacy.py`, "
            f"in this checkout at {head[:7]} (branch main)") in said, done.text
    assert "no job was started: no branch, no change note" in said
    assert stepwise_branches(repo) == []
    assert not state_path(repo).exists()
    assert git(repo, "rev-parse", "HEAD").strip() == head


def test_a_spec_edited_at_the_plan_gate_to_match_nothing_ends_the_job_and_keeps_no_branch(
        tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo")
    issue = write_issue(tmp_path / "issue.md")
    assert cli("run", "--repo", repo, "--issue", issue, "--number", str(NUMBER)).code == 3
    assert stepwise_branches(repo) == [f"stepwise/issue-{NUMBER}"]
    head = git(repo, "rev-parse", "HEAD").strip()
    write_issue(issue, find=[r"\bno_such_call\("])
    done = cli("run", "--repo", repo, "--issue", issue, "--number", str(NUMBER))
    assert done.code == 0, done.text
    said = " ".join(done.out.split())
    assert ("Nothing to do: nothing to change: spec field find (\\bno_such_call\\() matches "
            "nothing in the 10 files spec field paths (calc/**/*.py) selects, excluding "
            f"calc/legacy.py, at {head[:7]} (branch main), so the job ends here and nothing was "
            "committed.") in said, done.text  # the terminal shows code spans without backticks
    assert "job completed with nothing to do" in said
    assert stepwise_branches(repo) == []  # the branch never got a commit: it is not kept
