"""What the event normaliser ignores or passes on (bot/events.py): edits that change no body,
pushes to other branches (and the base moving), other actions and events, CI events that finish
nothing, and which repositories installation events name."""

from __future__ import annotations

from typing import Any

import pytest

from bot.events import Kind, MalformedPayloadError, normalise
from tests.bot.events_kit import event_for
from tests.kit.webhooks import event_header, make_event


@pytest.mark.parametrize("changes", [{"title": {"from": "Old title"}}, {}], ids=["title-only", "none"])
def test_issue_edited_without_a_body_change_is_ignored(changes: dict[str, Any]) -> None:
    event = event_for("issues.edited", changes=changes)
    assert event.kind is Kind.IGNORED and event.reason
    assert event_for("issues.edited", changes={"body": {"from": "old"}}).kind is Kind.ISSUE_EDITED


def test_issue_edited_without_a_changes_object_is_ignored() -> None:
    payload = make_event("issues.edited")
    del payload["changes"]
    assert normalise("issues", "d", payload).kind is Kind.IGNORED


@pytest.mark.parametrize("ref", ["refs/heads/feature/stepwise", "refs/tags/stepwise/v1",
                                 "refs/heads/stepwise-issue-1"])
def test_pushes_to_other_branches_are_ignored(ref: str) -> None:
    event = event_for("push", ref=ref)
    assert event.kind is Kind.IGNORED and event.reason


def test_a_push_to_the_default_branch_is_the_base_moving() -> None:
    event = event_for("push", ref="refs/heads/main", after="a" * 40)  # main is the default
    assert (event.kind, event.ref, event.after) == (Kind.BASE_PUSH, "refs/heads/main", "a" * 40)


def test_pushes_to_stepwise_branches_are_events() -> None:
    event = event_for("push", ref="refs/heads/stepwise/issue-12-2", after="a" * 40, sender="dev")
    assert (event.kind, event.ref, event.after, event.sender_is_bot) == (
        Kind.PUSH, "refs/heads/stepwise/issue-12-2", "a" * 40, False)


@pytest.mark.parametrize(("event_name", "action"), [
    ("issues", "opened"), ("issues", "unlabeled"), ("issue_comment", "deleted"),
    ("pull_request", "opened"), ("pull_request", "synchronize"),
])
def test_other_actions_are_ignored(event_name: str, action: str) -> None:
    base = {"issues": "issues.labeled", "issue_comment": "issue_comment.created",
            "pull_request": "pull_request.closed"}[event_name]
    payload = make_event(base)
    payload["action"] = action
    event = normalise(event_name, "d", payload)
    assert event.kind is Kind.IGNORED and action in event.reason


@pytest.mark.parametrize("event_name", ["deployment", "workflow_job", "star", "ping"])
def test_other_events_are_ignored_without_reading_the_payload(event_name: str) -> None:
    event = normalise(event_name, "d", {"anything": True})
    assert event.kind is Kind.IGNORED and event_name in event.reason


@pytest.mark.parametrize(("name", "action"), [
    ("check_run.completed", "requested_action"),
    ("check_suite.completed", "requested"), ("workflow_run.completed", "in_progress"),
])
def test_ci_events_that_finish_nothing_are_ignored(name: str, action: str) -> None:
    payload = make_event(name)
    payload["action"] = action
    event = normalise(event_header(name), "d", payload)
    assert event.kind is Kind.IGNORED and event.reason == f"{event_header(name)}.{action}"


def test_a_rerequested_check_run_is_a_rerun_naming_the_run_and_its_app() -> None:
    """"Re-run" on a check run (bot/server/check_rerun.py answers it for Stepwise's own)."""
    payload = make_event("check_run.completed")
    payload["action"] = "rerequested"
    event = normalise("check_run", "d", payload)
    run = payload["check_run"]
    assert event.kind is Kind.CHECK_RERUN and event.check_run_id == run["id"]
    assert (event.sha, event.check_app) == (run["head_sha"], run["app"]["slug"])


@pytest.mark.parametrize("state", ["pending", "error"])
def test_every_status_names_its_sha(state: str) -> None:
    payload = make_event("status")
    payload["state"] = state
    event = normalise("status", "d", payload)
    assert (event.kind, event.reason, event.sha) == (Kind.CI, f"status.{state}", payload["sha"])


def test_a_check_run_that_appears_is_a_ci_event() -> None:
    payload = make_event("check_run.completed")
    payload["action"] = "created"
    event = normalise("check_run", "d", payload)
    assert (event.kind, event.reason) == (Kind.CI, "check_run.created")


def test_a_ci_event_without_its_sha_is_malformed() -> None:
    payload = make_event("check_run.completed")
    del payload["check_run"]["head_sha"]
    with pytest.raises(MalformedPayloadError, match="head_sha"):
        normalise("check_run", "d", payload)


@pytest.mark.parametrize(("action", "key"), [("added", "repositories_added"),
                                            ("removed", "repositories_removed")])
def test_installation_repositories_names_the_repositories(action: str, key: str) -> None:
    payload = make_event("installation.created")
    payload.update(action=action, repository_selection="selected",
                   **{key: [{"id": 7, "full_name": "octo-org/gears", "name": "gears"}]})
    event = normalise("installation_repositories", "d", payload)
    assert (event.kind, event.reason, event.repos) == (
        Kind.INSTALLATION, f"installation_repositories.{action}", ("octo-org/gears",))
    assert (event.installation_id, event.account) == (1, "octo-org")


def test_an_uninstall_names_every_repository_it_had() -> None:
    payload = make_event("installation.created")
    payload["action"] = "deleted"
    event = normalise("installation", "d", payload)
    assert event.reason == "installation.deleted" and event.repos == ("octo-org/widgets",)
