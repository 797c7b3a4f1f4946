"""The maintainer's conversation, replayed through signed webhooks on the fake GitHub: 👀 on the
label, the PR assigned to the starter, every gate a new comment that mentions them, a failing
batch's retries editing one comment, the review requested when the PR is ready, one vocabulary
on every surface, and at most gates + 3 App comments per job."""

from __future__ import annotations

import re
from pathlib import Path

from jobs.kernel.model import BatchStatus, Gate, JobStatus
from tests.bot.conftest import REPO, World, open_world

LOCAL_WORDING = re.compile(r"(?<![/\w.])stepwise (approve|retry|skip|cancel|revert|status|run)\b"
                           r"|--repo|--number|`(approve|retry|skip|cancel|revert)( [^`]*)?`|\{\{")


def app_comments(world: World, *numbers: int) -> list[str]:
    return [c.body for n in numbers for c in world.gh.comments_on(world.repo, n)
            if c.user == world.gh.bot_login]


def test_the_conversation_notifies_the_starter_in_one_voice(world: World) -> None:
    world.send("issues.labeled", issue_number=1, sender="maria")
    world.work()
    issue = world.gh.issue(world.repo, 1)
    assert [r.content for r in issue.reactions] == ["eyes"]  # seen, before any plan
    job = world.job()
    assert job.server.started_by == "maria" and job.gate.kind is Gate.PLAN
    plan = app_comments(world, 1)
    assert len(plan) == 1 and plan[0].startswith("@maria: Stepwise needs your answer.")

    world.comment("/stepwise approve", by="maria")
    world.work()
    job = world.job()
    pull = world.gh.pull_for(world.repo, job.branch)
    assert pull is not None and pull.assignees == ["maria"]
    assert f"{REPO}#{pull.number}:assigned:maria" in world.gh.effects
    # The milestone report is the gate's comment: one comment, mentioning the starter.
    milestone = [b for b in app_comments(world, pull.number) if "gate `milestone`" in b]
    assert len(milestone) == 1 and milestone[0].startswith("@maria")
    assert "Milestone 1 (1/1 completed)" in milestone[0]
    # The plan comment no longer asks anything once approved.
    assert "To start the job" not in app_comments(world, 1)[0]

    # Batch 2 is split (its broken file set aside as batch 4, at the end): milestone 2's
    # report, then batch 3 and batch 4 alone, which stops at the failure gate.
    world.comment("/stepwise approve", by="maria", on=pull.number)
    world.work()
    assert world.job().gate.kind is Gate.MILESTONE
    world.comment("/stepwise approve", by="maria", on=pull.number)
    world.work()
    job = world.job()
    assert job.gate.kind is Gate.FAILURE and job.gate.batch == 4
    failure = [b for b in app_comments(world, pull.number) if "gate `failure`" in b]
    assert len(failure) == 1 and failure[0].startswith("@maria")
    assert "To leave batch 4 out, with the reason: `/stepwise skip <reason>`" in failure[0]
    assert "`/stepwise retry`" not in failure[0].split("Hint:")[0]
    before = len(app_comments(world, 1, pull.number))

    # A retry that fails the same way edits the same comment with the new attempt.
    world.comment("/stepwise retry", by="maria", on=pull.number)
    world.work()
    job = world.job()
    assert job.gate.kind is Gate.FAILURE and len(job.batch(4).attempts) == 2  # no auto-retry
    failure = [b for b in app_comments(world, pull.number) if "gate `failure`" in b]
    assert len(failure) == 1 and "Attempts so far: 2" in failure[0]
    assert len(app_comments(world, 1, pull.number)) == before

    world.comment("/stepwise skip needs a manual import fix", by="maria", on=pull.number)
    world.work()
    job = world.job()
    assert job.batch(4).status is BatchStatus.SKIPPED
    assert job.status is JobStatus.COMPLETED
    pull = world.gh.pull_for(world.repo, job.branch)
    assert not pull.draft and pull.requested_reviewers == ["maria"]

    # One voice on every surface; at most gates + 3 App comments for the whole job.
    said = app_comments(world, 1, pull.number)
    runs = [f"{run.title}\n{run.summary}" for run in world.repo.ci.runs.values()]
    for text in [*said, pull.body or "", *runs]:
        assert LOCAL_WORDING.search(text) is None, (LOCAL_WORDING.search(text), text)
    assert len(said) <= job.gate_counter + 3, (len(said), job.gate_counter)


def test_on_ghes_links_use_its_host_and_check_runs_open_the_task_center(
        tmp_path: Path, redis_url: str) -> None:
    center = "https://stepwise.example.org"
    with open_world(tmp_path, redis_url, github={"enterprise": True},
                    task_center_url=center) as world:
        world.send("issues.labeled", issue_number=1, sender="maria")
        world.work()
        world.comment("/stepwise approve", by="maria")
        world.work()
        job = world.job()
        pull = world.gh.pull_for(world.repo, job.branch)
        commit = job.batch(1).commit
        gate = next(b for b in app_comments(world, pull.number) if "gate `milestone`" in b)
        assert f"({world.gh.web_url}/{REPO}/commit/{commit})" in gate  # the report's links
        assert "github.com" not in gate + (pull.body or "")
        runs = list(world.repo.ci.runs.values())
        assert runs and all(run.details_url.startswith(f"{center}/jobs/{job.id}")
                            for run in runs)
        assert any(run.details_url.endswith("#batch-1") for run in runs)


def test_cannot_start_says_how_to_try_again(world: World) -> None:
    number = world.gh.add_issue(REPO, "Tidy things", "No spec block here.", user="maria")
    world.send("issues.labeled", issue_number=number, sender="maria")
    world.work()
    [said] = app_comments(world, number)
    assert said.startswith("Stepwise cannot start: no ```stepwise block")
    assert "remove the `stepwise` label and add it again" in said
