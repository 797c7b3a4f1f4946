"""Webhook payloads normalised into events: recorded payloads, bots, ignores, missing fields, long bodies."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from bot.events import MAX_BODY_CHARS, Event, Kind, MalformedPayloadError, normalise
from tests.kit.webhooks import EVENT_NAMES, event_header, make_event

REPO = "octo-org/widgets"
SPEC = "```stepwise\nrun: pathlib\npaths: [src/**/*.py]\n```\n"
TITLE = "Replace os.path with pathlib in src/"
COMMON = {"delivery_id": "d-1", "repo": REPO, "installation_id": 1}

EXPECTED: dict[str, dict[str, Any]] = {
    "check_run.completed": {**COMMON, "kind": Kind.CI, "sender": "bob", "reason": "check_run.completed",
                            "sha": "ec26c3e57ca3a959ca5aad62de7213c562f8c821",
                            "check_name": "Octocoders-linter", "check_app": "github-actions",
                            "check_app_id": 29310},
    "check_suite.completed": {**COMMON, "kind": Kind.CI, "reason": "check_suite.completed",
                              "sha": "ec26c3e57ca3a959ca5aad62de7213c562f8c821", "check_app_id": 29310},
    "status": {**COMMON, "kind": Kind.CI, "reason": "status.success", "check_app": "",
               "sha": "6113728f27ae82c7b1a177c8d03f9e96e0adf246", "check_name": "default"},
    "workflow_run.completed": {**COMMON, "kind": Kind.CI, "reason": "workflow_run.completed",
                               "sha": "5779607b49aab1200488439f02372c57b4f75444",
                               "check_name": "Manually triggered workflow", "check_app": "github-actions"},
    "installation.created": {"kind": Kind.INSTALLATION, "delivery_id": "d-1", "installation_id": 1,
                             "reason": "installation.created", "account": "octo-org"},
    "issue_comment.created": {
        **COMMON, "kind": Kind.COMMENT, "number": 1, "sender": "bob", "author": "bob",
        "body": "/stepwise approve", "comment_id": 1001, "created_at": "2026-03-02T09:15:00Z",
        "is_pull_request": False, "sender_is_bot": False,
    },
    "issue_comment.created.pull_request": {
        **COMMON, "kind": Kind.COMMENT, "number": 2, "sender": "bob", "author": "bob",
        "body": "/stepwise status", "comment_id": 1002, "is_pull_request": True,
    },
    "issue_comment.edited": {**COMMON, "kind": Kind.IGNORED, "sender": "bob"},  # edits are not re-read
    "issues.closed": {**COMMON, "kind": Kind.ISSUE_CLOSED, "number": 1, "sender": "alice",
                      "author": "alice", "title": TITLE, "body": SPEC},
    "issues.edited": {**COMMON, "kind": Kind.ISSUE_EDITED, "number": 1, "sender": "alice",
                      "author": "alice", "title": TITLE,
                      "body": "```stepwise\nrun: pathlib\npaths: [src/**/*.py, lib/**/*.py]\n```\n"},
    "issues.labeled": {**COMMON, "kind": Kind.LABELED, "number": 1, "sender": "bob", "author": "alice",
                       "label": "stepwise", "title": TITLE, "body": SPEC, "sender_is_bot": False},
    "ping": {"kind": Kind.IGNORED, "delivery_id": "d-1"},
    "pull_request.closed": {**COMMON, "kind": Kind.PULL_CLOSED, "number": 2, "sender": "alice",
                            "merged": False, "head_ref": "stepwise/issue-1"},
    "pull_request.closed.merged": {**COMMON, "kind": Kind.PULL_CLOSED, "number": 2, "sender": "alice",
                                   "merged": True, "head_ref": "stepwise/issue-1"},
    "push": {**COMMON, "kind": Kind.PUSH, "sender": "stepwise[bot]", "sender_is_bot": True,
             "ref": "refs/heads/stepwise/issue-1", "after": "6dcb09b5b57875f334f61aebed695e2e4193db5e"},
}


def event_for(name: str, **overrides: Any) -> Event:
    return normalise(event_header(name), "d-1", make_event(name, **overrides))


def test_the_table_covers_every_recorded_payload() -> None:
    assert sorted(EXPECTED) == EVENT_NAMES


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_recorded_payload(name: str) -> None:
    event = event_for(name)
    got = {key: getattr(event, key) for key in EXPECTED[name]}
    assert got == EXPECTED[name]


def test_events_are_frozen() -> None:
    event = event_for("issues.labeled")
    with pytest.raises(ValueError, match="frozen"):
        event.number = 2  # type: ignore[misc]


def test_repo_installation_and_numbers_follow_the_payload() -> None:
    event = event_for("issue_comment.created", repo="acme/tools", installation_id=77, issue_number=42,
                      comment_id=5005, comment_body="/stepwise retry", sender="carol")
    assert (event.repo, event.installation_id, event.number, event.comment_id, event.body,
            event.author, event.sender) == ("acme/tools", 77, 42, 5005, "/stepwise retry", "carol", "carol")


# --- bots -------------------------------------------------------------------------------------


@pytest.mark.parametrize(("sender", "sender_type", "is_bot"), [
    ("renovate", "Bot", True),  # by type
    ("dependabot[bot]", "User", True),  # by login
    ("stepwise[bot]", "Bot", True),
    ("bob", "User", False),
    ("botany", "User", False),
])
@pytest.mark.parametrize("name", ["issues.labeled", "issue_comment.created", "issues.edited", "push",
                                  "pull_request.closed"])
def test_bot_senders_are_flagged(name: str, sender: str, sender_type: str, is_bot: bool) -> None:
    event = event_for(name, sender=sender, sender_type=sender_type)
    assert (event.sender, event.sender_is_bot) == (sender, is_bot)


def test_a_comment_written_by_a_bot_is_flagged() -> None:
    event = event_for("issue_comment.created", sender="bob", comment_user="helper[bot]",
                      comment_user_type="Bot")
    assert (event.author, event.sender_is_bot) == ("helper[bot]", True)


# --- what is ignored -------------------------------------------------------------------------


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
    ("check_run.completed", "requested_action"), ("check_run.completed", "rerequested"),
    ("check_suite.completed", "requested"), ("workflow_run.completed", "in_progress"),
])
def test_ci_events_that_finish_nothing_are_ignored(name: str, action: str) -> None:
    payload = make_event(name)
    payload["action"] = action
    event = normalise(event_header(name), "d", payload)
    assert event.kind is Kind.IGNORED and event.reason == f"{event_header(name)}.{action}"


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


# --- what GitHub's schema allows to be missing or null ------------------------------------------


def test_a_delivery_without_installation_leaves_it_to_the_worker() -> None:
    payload = make_event("issues.labeled")
    del payload["installation"]
    event = normalise("issues", "d", payload)
    assert event.kind is Kind.LABELED and event.installation_id == 0


def test_issues_labeled_without_a_label_is_ignored() -> None:
    payload = make_event("issues.labeled")
    del payload["label"]
    event = normalise("issues", "d", payload)
    assert event.kind is Kind.IGNORED and "without a label" in event.reason


@pytest.mark.parametrize("name", ["issues.labeled", "issues.closed", "issues.edited"])
def test_a_null_issue_user_is_an_empty_author(name: str) -> None:
    payload = make_event(name)
    payload["issue"]["user"] = None
    event = normalise("issues", "d", payload)
    assert event.author == "" and event.number == 1


def test_a_null_comment_user_is_an_empty_author() -> None:
    payload = make_event("issue_comment.created")
    payload["comment"]["user"] = None
    event = normalise("issue_comment", "d", payload)
    assert event.kind is Kind.COMMENT and event.author == "" and event.sender == "bob"


def test_a_push_without_a_sender_names_its_pusher() -> None:
    payload = make_event("push")
    del payload["sender"]
    payload["pusher"] = {"name": "github-actions[bot]", "email": None}
    event = normalise("push", "d", payload)
    assert (event.kind, event.sender) == (Kind.PUSH, "github-actions[bot]")


def test_a_closed_issue_carries_its_labels() -> None:
    event = event_for("issues.closed", labels=["bug", "Stepwise"])
    assert event.labels == ("bug", "Stepwise")


@pytest.mark.parametrize(("ref", "files", "changed"), [
    ("refs/heads/main", [".github/stepwise.yml"], True),
    ("refs/heads/main", ["README.md"], False),
    ("refs/heads/feature", [".github/stepwise.yml"], False),
])
def test_a_push_to_the_default_branch_says_whether_it_may_change_the_config(
        ref: str, files: list[str], changed: bool) -> None:
    payload = make_event("push", ref=ref)
    payload["repository"]["default_branch"] = "main"
    payload["commits"] = [{"id": "a" * 40, "added": [], "removed": [], "modified": files}]
    event = normalise("push", "d", payload)
    base = Kind.BASE_PUSH if ref == "refs/heads/main" else Kind.IGNORED  # the jobs' base moved
    assert event.kind is base and event.config_changed is changed


# --- malformed payloads ------------------------------------------------------------------------


def drop(*path: str) -> Callable[[dict[str, Any]], None]:
    def change(payload: dict[str, Any]) -> None:
        target = payload
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]
    return change


@pytest.mark.parametrize(("name", "change", "field"), [
    ("issues.labeled", drop("repository"), "repository.full_name"),
    ("issues.labeled", drop("repository", "full_name"), "repository.full_name"),
    ("issues.labeled", drop("issue", "number"), "number"),
    ("issues.closed", drop("issue"), "issue"),
    ("issue_comment.created", drop("comment"), "comment"),
    ("issue_comment.created", drop("comment", "id"), "id"),
    ("pull_request.closed", drop("pull_request", "head", "ref"), "head.ref"),
    ("pull_request.closed", drop("pull_request", "number"), "number"),
    ("installation.created", drop("installation"), "installation"),
    ("push", drop("ref"), "ref"),
    ("push", drop("installation", "id"), "installation.id"),
])
def test_missing_fields_raise_naming_the_field(name: str, change: Callable[[dict[str, Any]], None],
                                               field: str) -> None:
    payload = make_event(name)
    change(payload)
    with pytest.raises(MalformedPayloadError) as malformed:
        normalise(event_header(name), "d", payload)
    assert f"`{field}`" in str(malformed.value)


@pytest.mark.parametrize("payload", [[], "text", None, 3])
def test_a_payload_that_is_not_an_object_is_malformed(payload: Any) -> None:
    with pytest.raises(MalformedPayloadError):
        normalise("issues", "d", payload)


def test_a_non_numeric_issue_number_is_malformed() -> None:
    payload = make_event("issues.labeled")
    payload["issue"]["number"] = "one"
    with pytest.raises(MalformedPayloadError):
        normalise("issues", "d", payload)


@pytest.mark.parametrize("value", [None, "abc", {"id": 1}])
def test_a_malformed_installation_id_is_malformed(value: Any) -> None:
    payload = make_event("issues.labeled")
    payload["installation"]["id"] = value
    with pytest.raises(MalformedPayloadError):
        normalise("issues", "d", payload)


# --- long bodies ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["issues.labeled", "issues.edited", "issue_comment.created"])
def test_bodies_longer_than_64k_are_cut(name: str) -> None:
    long = "x" * (MAX_BODY_CHARS - 1) + "é" + "tail" * 1000
    key = "comment_body" if name.startswith("issue_comment") else "issue_body"
    event = event_for(name, **{key: long})
    assert MAX_BODY_CHARS == 65_536
    assert event.body == long[:MAX_BODY_CHARS] and len(event.body) == MAX_BODY_CHARS
    exact = "y" * MAX_BODY_CHARS
    assert event_for(name, **{key: exact}).body == exact


def test_a_missing_body_is_empty() -> None:
    assert event_for("issues.labeled", issue_body=None).body == ""
    assert event_for("issue_comment.created", comment_body=None).body == ""
