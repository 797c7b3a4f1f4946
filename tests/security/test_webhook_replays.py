"""Replayed webhooks, signed with the real secret, into the real app and worker (issue 40).

The signature covers the body only: an attacker holding one captured signed body can send it
again under a new delivery id, or under another `X-GitHub-Event`. Each family is refused: a body
seen before is a duplicate whatever its id; a body whose shape is not its event's is a 400; and
what ends, parks or cancels jobs happens only once GitHub's API confirms it."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest

from bot.web.payload_shapes import OWN_FIELDS
from jobs.kernel.model import JobStatus
from tests.bot.conftest import REPO, World
from tests.bot.test_app_events import at_first_milestone
from tests.kit.npm_fixtures import webhook_examples
from tests.kit.webhooks import make_event

HANDLED = sorted(OWN_FIELDS)


def replay(world: World, event: str, body: bytes) -> dict[str, Any]:
    """The same signed body under a delivery id of the attacker's choosing."""
    answer: dict[str, Any] = world.post(event, body, delivery_id=str(uuid.uuid4())).json()
    return answer


def test_a_replayed_label_delivery_does_not_resume_a_cancelled_job(world: World) -> None:
    payload = make_event("issues.labeled", repo=REPO, issue_number=1, sender="maria")
    captured = json.dumps(payload).encode()
    assert world.post("issues", captured).json()["status"] == "queued"
    world.work()
    world.comment("/stepwise cancel", by="maria")
    world.work()
    assert world.job().status is JobStatus.CANCELLED
    assert replay(world, "issues", captured) == {"status": "duplicate",
                                                 "reason": "replayed body"}
    assert world.queued() == 0
    world.work()
    assert world.job().status is JobStatus.CANCELLED


def test_a_replayed_command_is_not_applied_twice(world: World) -> None:
    world.send("issues.labeled", issue_number=1, sender="maria")
    world.work()
    payload = make_event("issue_comment.created", repo=REPO, issue_number=1, sender="maria",
                         comment_body="/stepwise cancel", comment_id=4242)
    captured = json.dumps(payload).encode()
    assert world.post("issue_comment", captured).json()["status"] == "queued"
    assert replay(world, "issue_comment", captured)["status"] == "duplicate"
    assert world.queued() == 1


def test_githubs_own_redelivery_keeps_its_id_and_is_answered_as_before(world: World) -> None:
    """The body dedupe does not change what a redelivery (same id, same body) gets."""
    payload = make_event("issues.labeled", repo=REPO, issue_number=1, sender="maria")
    body = json.dumps(payload).encode()
    assert world.post("issues", body, delivery_id="d-1").json()["status"] == "queued"
    assert world.post("issues", body, delivery_id="d-1").json() == {"status": "duplicate"}


def examples_by_shape() -> list[tuple[str, dict[str, Any]]]:
    """One recorded payload per (event, action) the App acts on, github.com's and GHES's."""
    seen: dict[tuple[str, str], tuple[str, dict[str, Any]]] = {}
    for event, payload in webhook_examples():
        if event in OWN_FIELDS:
            seen.setdefault((event, str(payload.get("action"))), (event, payload))
    return list(seen.values())


def test_every_recorded_payload_sent_as_another_event_is_refused(world: World) -> None:
    refused, wrong = 0, []
    for event, payload in examples_by_shape():
        body = json.dumps(payload).encode()
        for other in HANDLED:
            if other == event:
                continue
            response = world.post(other, body)
            if response.status_code != 400 or \
                    response.json()["status"] != "payload does not match its event":
                wrong.append((event, payload.get("action"), other, response.text))
            refused += 1
    assert not wrong, wrong[:5]
    assert refused >= 400 and world.queued() == 0  # 50 shapes, each as 9 other events


def test_a_comment_sent_as_an_uninstall_fails_no_job(world: World) -> None:
    at_first_milestone(world)
    payload = make_event("issue_comment.created", repo=REPO, issue_number=1, sender="maria")
    payload["action"] = "deleted"
    response = world.post("installation", json.dumps(payload).encode())
    assert response.status_code == 400
    assert response.json()["problem"] == "`comment` belongs to another event's payload, " \
        "not to `installation`"
    world.work()
    assert world.job().status is JobStatus.AWAITING_HUMAN


def installation_payload(action: str) -> dict[str, Any]:
    payload = make_event("installation.created", repo=REPO)
    payload["action"] = action
    return payload


@pytest.mark.parametrize("action", ["deleted", "suspend"])
def test_an_uninstall_or_suspend_github_does_not_confirm_changes_nothing(
    world: World, action: str,
) -> None:
    """A well-formed body never seen before (e.g. captured from another App's endpoint with the
    same secret, or older than the body dedupe keeps): the worker asks GitHub first."""
    at_first_milestone(world)
    response = world.post("installation", json.dumps(installation_payload(action)).encode())
    assert response.json()["status"] == "queued"
    world.work()
    job = world.job()
    assert job.status is JobStatus.AWAITING_HUMAN and not job.server.parked
    assert world.redis.get("stepwise:installation:1:suspended") is None
    assert world.gh.requests_to("GET", r"^/app/installations/1$")
    # Once GitHub says so, the same kind of delivery acts.
    if action == "deleted":
        world.gh.uninstall(1)
    else:
        world.gh.suspend(1)
    world.post("installation", json.dumps(installation_payload(action)).encode() + b" ")
    world.work()
    job = world.job()
    assert job.status is JobStatus.FAILED if action == "deleted" else bool(job.server.parked)


def test_a_repository_removal_github_does_not_confirm_changes_nothing(world: World) -> None:
    at_first_milestone(world)
    payload = installation_payload("removed")
    payload.pop("repositories", None)
    payload.update(repository_selection="selected", repositories_added=[],
                   repositories_removed=[{"id": world.repo.id, "full_name": REPO,
                                          "name": world.repo.name}])
    assert world.post("installation_repositories",
                      json.dumps(payload).encode()).json()["status"] == "queued"
    world.work()
    assert world.job().status is JobStatus.AWAITING_HUMAN
    assert world.gh.requests_to("GET", rf"^/repos/{REPO}/installation$")


@pytest.mark.parametrize("event", ["issues.closed", "pull_request.closed"])
def test_a_close_of_an_issue_or_pull_request_that_is_open_cancels_nothing(
    world: World, event: str,
) -> None:
    """A captured close, replayed after the issue was reopened and the job resumed."""
    at_first_milestone(world)
    job = world.job()
    pull = job.server.pull.number
    overrides = {"issue_number": 1} if event == "issues.closed" else \
        {"pr_number": pull, "head_ref": job.branch, "merged": False}
    payload = make_event(event, repo=REPO, sender="maria", **overrides)
    assert world.post(event.split(".")[0], json.dumps(payload).encode()).json()["status"] \
        == "queued"
    world.work()
    assert world.job().status is JobStatus.AWAITING_HUMAN
    assert world.gh.repo(REPO).issues[1 if event == "issues.closed" else pull].state == "open"


@pytest.mark.parametrize("action", [[], {"x": 1}, 7, None])
def test_an_action_that_is_no_string_is_a_400_not_a_500(world: World, action: object) -> None:
    """Found by the webhook fuzzer: a list as `action` made the shape check raise (500)."""
    payload = make_event("installation.created", repo=REPO, sender="maria")
    payload["action"] = action
    answer = world.post("installation", json.dumps(payload).encode())
    assert answer.status_code == 400, answer.text
