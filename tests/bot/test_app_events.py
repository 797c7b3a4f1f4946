"""Closing issues and pull requests, and pushes by people, as the App sees them."""

from __future__ import annotations

from pathlib import Path

from jobs.domain.model import BatchStatus, Gate, JobStatus
from tests.bot.conftest import REPO, World, open_world
from tests.kit.local_e2e import config_text, sample_files


def at_first_milestone(world: World) -> None:
    world.send("issues.labeled", issue_number=1, sender="maria")
    world.work()
    world.comment("/stepwise approve", by="maria")
    world.work()
    assert world.job().gate.kind is Gate.MILESTONE


def test_closing_the_issue_cancels_the_job_and_keeps_the_committed_batch(world: World) -> None:
    at_first_milestone(world)
    world.gh.close_issue(REPO, 1)
    world.send("issues.closed", issue_number=1, sender="maria")
    world.work()
    job = world.job()
    assert job.status is JobStatus.CANCELLED
    assert job.batch(1).status is BatchStatus.COMPLETED
    note = world.gh.read_file(world.repo, job.note_path, ref=job.branch)
    assert "## Cancelled" in note


def test_closing_the_pull_request_unmerged_cancels_the_job(world: World) -> None:
    at_first_milestone(world)
    pull = world.gh.pull_for(world.repo, world.job().branch)
    world.send("pull_request.closed", pr_number=pull.number, head_ref=world.job().branch,
               merged=False, sender="maria")
    world.work()
    assert world.job().status is JobStatus.CANCELLED


def test_a_human_push_to_the_job_branch_pauses_the_job(world: World) -> None:
    at_first_milestone(world)
    job = world.job()
    world.gh.push_files(REPO, job.branch, {"NOTES.md": "a human was here\n"}, "human tweak")
    world.send("push", ref=f"refs/heads/{job.branch}", sender="maria")
    world.comment("/stepwise approve", by="maria", on=world.gh.pull_for(world.repo,
                                                                      job.branch).number)
    world.work()
    job = world.job()
    assert job.gate.kind is Gate.HUMAN_COMMIT
    assert "human tweak" in job.gate.reason
    pull = world.gh.pull_for(world.repo, job.branch)
    assert any("Waiting at gate `human_commit`" in b for b in world.bodies(pull.number))
    world.comment("/stepwise approve", by="maria", on=pull.number)
    world.work()
    job = world.job()
    assert job.gate is None or job.gate.kind is not Gate.HUMAN_COMMIT
    log = world.gh.git_log(world.repo, job.branch)
    assert "human tweak" in log  # never dropped, never force-pushed over


def test_labelling_again_after_completion_starts_a_new_job_on_a_new_branch(
    tmp_path: Path, redis_url: str
) -> None:
    files = sample_files(config=config_text(require_plan_approval=False,
                                            batches_per_milestone=10))
    with open_world(tmp_path, redis_url, files=files) as world:
        world.send("issues.labeled", issue_number=1, sender="maria")
        world.work()
        first = world.job()
        assert first.status is JobStatus.COMPLETED
        world.send("issues.labeled", issue_number=1, sender="maria")
        world.work()
        second = world.job()
        assert second.id != first.id and second.branch == "stepwise/issue-1-2"
        assert world.ctx.store.load_id(first.id).status is JobStatus.COMPLETED
