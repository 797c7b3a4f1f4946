"""Through the App, the same truth as locally (issue 41.6), by signed webhooks into the real app
against the fake GitHub: `/stepwise revert 2` in a job whose spec names only `paths` lists the
files it undid as leftovers (the reply, the change note on the branch, the closing summary), and
a `find` that matches nothing is answered on the issue, saying what was searched and where, with
no branch, change note or pull request made."""

from __future__ import annotations

from pathlib import Path

from jobs.kernel.model import BatchStatus, Gate, JobStatus
from tests.bot.conftest import ISSUE_BODY, REPO, World, open_world
from tests.kit.local_e2e import config_text, issue_markdown, sample_files
from tests.kit.repos import git

# Rewrites the files it is given that call old_sum(), leaves the others alone, exits 0.
CODEMOD = ('import sys\nfor path in sys.argv[1:]:\n    text = open(path).read()\n'
           '    if "old_sum(" in text:\n'
           '        open(path, "w").write(text.replace("old_sum(", "new_sum("))\n')


def start(world: World, number: int) -> None:
    world.send("issues.labeled", issue_number=number, sender="maria")
    world.work()


def test_a_revert_in_a_paths_only_job_lists_the_files_it_undid(tmp_path: Path,
                                                                redis_url: str) -> None:
    files = {**sample_files(config=config_text(batch_size=3, batches_per_milestone=2)),
             "tools/codemod.py": CODEMOD}
    with open_world(tmp_path, redis_url, files=files) as world:
        number = world.gh.add_issue(REPO, "Use new_sum()", issue_markdown(
            recipe="command", replace=None, find=None, exclude=None,
            paths=["calc/alpha/*.py", "calc/beta/*.py"],
            run="python tools/codemod.py {files}").split("\n", 1)[1], user="maria")
        start(world, number)
        world.comment("/stepwise approve", by="maria", on=number)
        world.work()
        job = world.job(number)
        if job.gate is not None and job.gate.kind is Gate.MILESTONE:
            world.comment("/stepwise approve", by="maria", on=number)
            world.work()
            job = world.job(number)
        assert job.status is JobStatus.COMPLETED, (job.status, job.gate)
        note = world.gh.read_file(world.repo, job.note_path, ref=job.branch)
        assert note is not None and "## Leftovers for a human to confirm\n\n- none\n" in note

        pull = world.gh.pull_for(world.repo, job.branch)
        assert pull is not None
        world.comment("/stepwise revert 2", by="maria", on=pull.number)
        world.work()
        job = world.job(number)
        assert job.batch(2).status is BatchStatus.REVERTED
        revert = job.batch(2).revert_commit
        assert revert is not None
        reply = [b for b in world.bodies(pull.number) if "batch 2 reverted" in b]
        assert len(reply) == 1 and (
            f"batch 2 reverted in {revert[:7]}; the reverted head passes validation; its change "
            "to 2 files is undone (`calc/beta/score.py`, `calc/beta/total.py`), listed as "
            "leftovers for a human to confirm") in reply[0], reply

        note = world.gh.read_file(world.repo, job.note_path, ref=job.branch)
        assert note is not None
        leftovers = note.split("## Leftovers for a human to confirm\n\n", 1)[1].split("\n\n")[0]
        assert leftovers.splitlines() == [
            f"- `calc/beta/score.py` — batch 2's change to it was reverted (`{revert[:7]}`)",
            f"- `calc/beta/total.py` — batch 2's change to it was reverted (`{revert[:7]}`)"]
        assert "status `completed with leftovers`" in note
        assert "files: 2 committed, 2 reverted; 2 leftovers for a human" in note
        card = world.gh.pull_for(world.repo, job.branch).body  # type: ignore[union-attr]
        assert "Files: 2 committed, 2 reverted; 2 leftovers for a human" in card


def test_a_find_that_matches_nothing_is_answered_and_makes_nothing(tmp_path: Path,
                                                                   redis_url: str) -> None:
    with open_world(tmp_path, redis_url) as world:
        number = world.gh.add_issue(REPO, "Drop no_such_call()", issue_markdown(
            find=[r"\bno_such_call\("]).split("\n", 1)[1], user="maria")
        head = world.gh.branch_head(world.repo, "main")
        assert head is not None
        start(world, number)
        answers = [b for b in world.bodies(number) if "Stepwise cannot start" in b]
        assert len(answers) == 1, world.bodies(number)
        said = answers[0]
        assert said.startswith(
            "Stepwise cannot start: nothing to change: spec field `find` (`\\bno_such_call\\(`) "
            "matches nothing in the 10 files spec field `paths` (`calc/**/*.py`) selects, "
            f"excluding `calc/legacy.py`, in {REPO} at {head[:7]} (branch main); so no job was "
            "started: no branch, change note or pull request\n\nFix: check the patterns"), said
        assert world.ctx.store.find(REPO, number) is None
        branches = git(world.repo.path, "for-each-ref", "--format=%(refname:short)",
                       "refs/heads/")
        assert branches.split() == ["main"]
        assert world.repo.pulls == {}


def test_a_spec_edited_to_match_nothing_ends_the_job_saying_so_and_makes_nothing(
        world: World) -> None:
    start(world, 1)
    assert world.job().gate.kind is Gate.PLAN
    body = ISSUE_BODY.replace("old_sum", "no_such_call")
    world.gh.issue(REPO, 1).body = body
    world.send("issues.edited", issue_number=1, issue_body=body, sender="maria")
    world.work()
    job = world.job()
    assert job.status is JobStatus.COMPLETED and job.batches == []
    summary = next(b for b in world.bodies(1) if "Stepwise ended" in b)
    assert summary.startswith(
        "Stepwise ended without a change: nothing to change: spec field `find` "
        "(`\\bno_such_call\\(`) matches nothing in the 10 files spec field `paths` "
        f"(`calc/**/*.py`) selects, excluding `calc/legacy.py`, in {REPO} at "
        f"{job.head_sha[:7]} (branch main), so the job ends here and nothing was committed. No "
        "branch, change note or pull request was made.\n"), summary
    assert "batches 0/0" not in summary and "change note is" not in summary
    plan = next(b for b in world.bodies(1) if "## Plan for #1" in b)
    assert "needs your answer" not in plan and "/stepwise approve" not in plan
    assert "Nothing to do: nothing to change: spec field `find`" in plan
    assert ": not run\n" in plan and "passes (" not in plan  # the first plan's baseline is gone
    branches = git(world.repo.path, "for-each-ref", "--format=%(refname:short)", "refs/heads/")
    assert branches.split() == ["main"] and world.repo.pulls == {}
