"""Missing and null fields in webhook payloads (bot/events.py): the ones GitHub's schema allows
(no installation, no label, null users, no sender, a push that may change the config), and the
ones that make a payload malformed, with an error naming the field."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from bot.events import Kind, MalformedPayloadError, normalise
from tests.bot.events_kit import event_for
from tests.kit.webhooks import event_header, make_event

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
    ("refs/heads/feature", ["README.md"], False),
])
def test_a_push_to_the_default_branch_says_whether_it_may_change_the_config(
        ref: str, files: list[str], changed: bool) -> None:
    payload = make_event("push", ref=ref)
    payload["repository"]["default_branch"] = "main"
    payload["commits"] = [{"id": "a" * 40, "added": [], "removed": [], "modified": files}]
    event = normalise("push", "d", payload)
    # the jobs' base moved; another branch changing the config gets its `Stepwise config` run
    other = Kind.CONFIG_PUSH if ".github/stepwise.yml" in files else Kind.IGNORED
    base = Kind.BASE_PUSH if ref == "refs/heads/main" else other
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
