"""Closing issues and pull requests, and pushes by people, as the App sees them."""

from __future__ import annotations

import json
import re
from pathlib import Path

import httpx
import pytest

from jobs.kernel.model import BatchStatus, Gate, JobStatus
from tests.bot.conftest import REPO, World, open_world
from tests.kit.local_e2e import config_text, sample_files
from tests.kit.webhooks import make_event


def at_first_milestone(world: World) -> None:
    world.label_and_approve()
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
    # The summary says who ended it and what stays; the plan comment asks nothing any more.
    summary = [b for b in world.bodies(1) if b.startswith("Stepwise was cancelled")]
    assert len(summary) == 1 and "@maria closed the issue" in summary[0]
    assert f"The 1 completed batch stays on `{job.branch}`" in summary[0]
    plan = next(b for b in world.bodies(1) if "Plan for #1" in b)
    assert "To start the job" not in plan and "was cancelled" in plan


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
    [accepted] = job.human_commits  # kept on the record, counted on the pull request's card
    assert (accepted.subject, accepted.files) == ("human tweak", ["NOTES.md"])
    assert any("1 commit by a person" in b for b in world.bodies(pull.number))


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


def test_a_push_by_another_bot_is_someone_elses_commit(world: World) -> None:
    at_first_milestone(world)
    job = world.job()
    world.gh.push_files(REPO, job.branch, {"NOTES.md": "formatted\n"}, "ci: autoformat",
                        author=("github-actions[bot]", "41898282+github-actions[bot]@users.noreply"))
    pushed = world.send("push", ref=f"refs/heads/{job.branch}", sender="github-actions[bot]",
                        sender_type="Bot")
    assert pushed.json()["status"] == "queued"
    pull = world.gh.pull_for(world.repo, job.branch)
    world.comment("/stepwise approve", by="maria", on=pull.number)
    world.work()
    job = world.job()
    assert job.gate.kind is Gate.HUMAN_COMMIT and "ci: autoformat" in job.gate.reason
    assert "ci: autoformat" in world.gh.git_log(world.repo, job.branch)


def test_the_trigger_label_matches_case_insensitively(world: World) -> None:
    assert world.send("issues.labeled", issue_number=1, sender="maria",
                      label="Stepwise").json()["status"] == "queued"
    world.work()
    assert world.job().gate.kind is Gate.PLAN


def uninstall(world: World, event: str, action: str) -> None:
    """The owner uninstalls the App (or removes the repository) on GitHub; GitHub says so."""
    if event == "installation":
        world.gh.uninstall(1)
    else:
        world.gh.remove_from_installation(1, REPO)
    payload = make_event("installation.created", repo=REPO)
    payload["action"] = action
    if event == "installation_repositories":
        payload.pop("repositories", None)
        payload.update(repository_selection="selected", repositories_added=[],
                       repositories_removed=[{"id": world.repo.id, "full_name": REPO,
                                              "name": world.repo.name}])
    response = world.post(event, json.dumps(payload).encode())
    assert response.json()["status"] == "queued", response.text
    world.work()


@pytest.mark.parametrize(("event", "action"), [("installation", "deleted"),
                                               ("installation_repositories", "removed")])
def test_an_uninstall_or_removal_ends_the_repositorys_jobs(world: World, event: str, action: str) -> None:
    at_first_milestone(world)
    uninstall(world, event, action)
    job = world.job()
    assert job.status is JobStatus.FAILED
    assert job.error.code == "installation_removed" and job.error.retry_class == "do_not_retry"
    assert f"{event}.{action}" in job.error.message
    assert any(e.kind == "installation_removed" for e in job.events)
    assert world.queued() == 0


def test_an_installation_event_for_another_repository_leaves_the_job_alone(world: World) -> None:
    at_first_milestone(world)
    payload = make_event("installation.created", repo=REPO)
    payload.pop("repositories", None)
    payload.update(action="removed", repository_selection="selected", repositories_added=[],
                   repositories_removed=[{"id": 1, "full_name": "octo-org/other",
                                          "name": "other"}])
    world.post("installation_repositories", json.dumps(payload).encode())
    world.work()
    assert world.job().status is JobStatus.AWAITING_HUMAN


def test_a_delivery_without_installation_is_resolved_by_the_worker(world: World) -> None:
    payload = make_event("issues.labeled", repo=REPO, issue_number=1, sender="maria")
    del payload["installation"]
    assert world.post("issues", json.dumps(payload).encode()).json()["status"] == "queued"
    world.work()
    assert world.job().gate.kind is Gate.PLAN
    assert world.gh.requests_to("GET", rf"^/repos/{REPO}/installation$")  # asked as the App


def test_an_ended_job_shows_no_stale_gate_anywhere(tmp_path: Path, redis_url: str) -> None:
    """Uninstalled while waiting at a gate: the record, the task center's list and API and
    `status --server`'s card show a failed job, not "Waiting at gate"."""
    from bot.plumbing.redis_store import RedisStore
    from bot.taskcenter.records import HeadCache
    from bot.taskcenter.terminal import server_status
    from tests.bot.taskcenter.conftest import TOKEN

    with open_world(tmp_path, redis_url, dashboard_token=TOKEN) as world:
        at_first_milestone(world)
        uninstall(world, "installation", "deleted")
        job = world.job()
        assert job.status is JobStatus.FAILED and job.gate is None
        card, code = server_status(REPO, 1, url=redis_url)
        assert code == 1 and "Waiting at gate" not in card
        assert not re.search(r"\bapprove\b", card)  # no answer offered ("approved earlier" may stay)
        with httpx.Client(base_url=world.url, trust_env=False) as client:
            client.post("/login", data={"token": TOKEN, "next": "/jobs"})
            summary = client.get(f"/api/jobs/{job.id}").json()["summary"]
            listed = client.get("/api/jobs").json()
        assert summary["status"] == "failed" and summary["gate"] is None
        assert [h.get("gate") for h in listed["jobs"]] == [None]
        # A record saved before this fix (ended with its gate still set) reads the same way.
        raw = json.loads(world.redis.get(f"stepwise:job:{job.id}") or b"{}")
        assert raw.get("gate") is None
        stale = {**raw, "gate": {"id": "g-old", "kind": "milestone", "reason": "old",
                                 "opened_at": "2026-01-01T00:00:00Z"}}
        world.redis.set(f"stepwise:job:{job.id}", json.dumps(stale))
        reloaded = RedisStore(world.redis).load_id(job.id)
        assert reloaded is not None and reloaded.gate is None
        [head] = HeadCache().heads(world.redis, [job.id])
        assert head.gate is None and head.group.value == "failed"
        card, _ = server_status(REPO, 1, url=redis_url)
        assert "Waiting at gate" not in card
