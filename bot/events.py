"""Webhook payloads normalised into small events; commands never read raw webhook shapes."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

MAX_BODY_CHARS = 65_536


class Kind(StrEnum):
    LABELED = "labeled"  # issues.labeled: maybe the trigger label
    COMMENT = "comment"  # issue_comment.created on an issue or a pull request
    ISSUE_EDITED = "issue_edited"  # issues.edited with a body change
    ISSUE_CLOSED = "issue_closed"
    PULL_CLOSED = "pull_closed"
    PUSH = "push"  # a push to a stepwise/ branch by someone else
    INSTALLATION = "installation"
    IGNORED = "ignored"


class Event(BaseModel):
    """What the worker needs to know about one delivery."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Kind
    delivery_id: str
    repo: str = ""
    installation_id: int = 0
    number: int = 0
    sender: str = ""
    sender_is_bot: bool = False
    label: str = ""
    title: str = ""
    body: str = ""
    author: str = ""
    comment_id: int = 0
    created_at: str = ""
    is_pull_request: bool = False
    merged: bool = False
    ref: str = ""
    head_ref: str = ""
    after: str = ""
    reason: str = ""


class MalformedPayloadError(ValueError):
    """The payload lacks a field this event needs."""


def _get(data: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(data, dict) or key not in data:
            raise MalformedPayloadError(f"missing `{'.'.join(path)}`")
        data = data[key]
    return data


def _is_bot(user: Any) -> bool:
    login = str(user.get("login", "")) if isinstance(user, dict) else ""
    return (isinstance(user, dict) and user.get("type") == "Bot") or login.endswith("[bot]")


def _text(value: Any) -> str:
    return value[:MAX_BODY_CHARS] if isinstance(value, str) else ""


def normalise(event_name: str, delivery_id: str, payload: Any) -> Event:
    """The Event for one delivery; MalformedPayloadError when a needed field is missing."""
    if not isinstance(payload, dict):
        raise MalformedPayloadError("the payload is not a JSON object")
    action = payload.get("action", "")
    if event_name in ("installation", "installation_repositories"):
        return Event(kind=Kind.INSTALLATION, delivery_id=delivery_id, reason=str(action))
    if event_name not in ("issues", "issue_comment", "pull_request", "push"):
        return Event(kind=Kind.IGNORED, delivery_id=delivery_id, reason=f"event {event_name}")
    try:
        common: dict[str, Any] = {
            "delivery_id": delivery_id,
            "repo": str(_get(payload, "repository", "full_name")),
            "installation_id": _number(payload, "installation", "id"),
            "sender": str(_get(payload, "sender", "login")),
            "sender_is_bot": _is_bot(payload.get("sender")),
        }
        return _route(event_name, str(action), payload, common)
    except MalformedPayloadError:
        raise
    except (ValidationError, TypeError, ValueError) as exc:
        raise MalformedPayloadError(str(exc).splitlines()[0][:200]) from None


def _number(data: Any, *path: str) -> int:
    value = _get(data, *path)
    if isinstance(value, bool) or not isinstance(value, int):
        raise MalformedPayloadError(f"`{'.'.join(path)}` is not a number")
    return value


def _route(event_name: str, action: str, payload: dict[str, Any], common: dict[str, Any]) -> Event:
    if event_name == "issues" and action in ("labeled", "edited", "closed"):
        issue = _get(payload, "issue")
        fields = {**common, "number": int(_get(issue, "number")), "title": _text(issue.get("title")),
                  "body": _text(issue.get("body")), "author": str(_get(issue, "user", "login"))}
        if action == "labeled":
            return Event(kind=Kind.LABELED, label=str(_get(payload, "label", "name")), **fields)
        if action == "edited":
            if "body" not in (payload.get("changes") or {}):
                return Event(kind=Kind.IGNORED, reason="issue edited without a body change",
                             **fields)
            return Event(kind=Kind.ISSUE_EDITED, **fields)
        return Event(kind=Kind.ISSUE_CLOSED, **fields)
    if event_name == "issue_comment" and action == "created":
        issue, comment = _get(payload, "issue"), _get(payload, "comment")
        return Event(
            kind=Kind.COMMENT, **{**common, "sender_is_bot": common["sender_is_bot"]
                                  or _is_bot(comment.get("user"))},
            number=int(_get(issue, "number")), comment_id=int(_get(comment, "id")),
            body=_text(comment.get("body")), author=str(_get(comment, "user", "login")),
            created_at=str(comment.get("created_at", "")),
            is_pull_request="pull_request" in issue,
        )
    if event_name == "pull_request" and action == "closed":
        pull = _get(payload, "pull_request")
        return Event(kind=Kind.PULL_CLOSED, number=int(_get(pull, "number")),
                     merged=bool(pull.get("merged")), head_ref=str(_get(pull, "head", "ref")),
                     **common)
    if event_name == "push":
        ref = str(_get(payload, "ref"))
        if not ref.startswith("refs/heads/stepwise/"):
            return Event(kind=Kind.IGNORED, reason="push to another branch", **common)
        return Event(kind=Kind.PUSH, ref=ref, after=str(payload.get("after", "")), **common)
    return Event(kind=Kind.IGNORED, reason=f"{event_name}.{action}", **common)
