"""Webhook payloads normalised into events (bot/events.py): every recorded payload and the event
it gives, frozen events, fields that follow the payload, bot senders flagged, long bodies cut."""

from __future__ import annotations

from typing import Any

import pytest

from bot.events import MAX_BODY_CHARS, Kind
from tests.bot.events_kit import event_for
from tests.kit.webhooks import EVENT_NAMES

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
    "issues.reopened": {**COMMON, "kind": Kind.ISSUE_REOPENED, "number": 1, "sender": "alice",
                        "author": "alice", "title": TITLE, "body": SPEC},
    "issues.labeled": {**COMMON, "kind": Kind.LABELED, "number": 1, "sender": "bob", "author": "alice",
                       "label": "stepwise", "title": TITLE, "body": SPEC, "sender_is_bot": False},
    "ping": {"kind": Kind.IGNORED, "delivery_id": "d-1"},
    "pull_request.closed": {**COMMON, "kind": Kind.PULL_CLOSED, "number": 2, "sender": "alice",
                            "merged": False, "head_ref": "stepwise/issue-1"},
    "pull_request.closed.merged": {**COMMON, "kind": Kind.PULL_CLOSED, "number": 2, "sender": "alice",
                                   "merged": True, "head_ref": "stepwise/issue-1"},
    "pull_request.reopened": {**COMMON, "kind": Kind.PULL_REOPENED, "number": 2, "sender": "alice",
                              "head_ref": "stepwise/issue-1", "is_pull_request": True},
    "push": {**COMMON, "kind": Kind.PUSH, "sender": "stepwise[bot]", "sender_is_bot": True,
             "ref": "refs/heads/stepwise/issue-1", "after": "6dcb09b5b57875f334f61aebed695e2e4193db5e"},
}


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
