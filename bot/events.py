"""Webhook payloads normalised into small events; commands never read raw webhook shapes."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from jobs.inputs.config import CONFIG_PATH

MAX_BODY_CHARS = 65_536
INSTALLATION_EVENTS = ("installation", "installation_repositories")
CI_EVENTS = ("check_run", "check_suite", "status", "workflow_run")


class Kind(StrEnum):
    LABELED = "labeled"  # issues.labeled: maybe the trigger label
    COMMENT = "comment"  # issue_comment.created on an issue or a pull request
    ISSUE_EDITED = "issue_edited"  # issues.edited with a body change
    ISSUE_CLOSED = "issue_closed"
    PULL_CLOSED = "pull_closed"
    ISSUE_REOPENED = "issue_reopened"  # an ended job's issue reopened: offer to resume it
    PULL_REOPENED = "pull_reopened"
    PUSH = "push"  # a push to a stepwise/ branch by someone else
    BASE_PUSH = "base_push"  # a push to the default branch: the base of the repository's jobs
    CONFIG_PUSH = "config_push"  # a push to another branch that changes .github/stepwise.yml
    INSTALLATION = "installation"
    CI = "ci"  # a check run created or completed, a suite or workflow run completed, a status
    CHECK_RERUN = "check_rerun"  # check_run.rerequested: "Re-run" pressed on a check run
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
    sender_id: int = 0  # the sender's account id: what an `approvers` entry is matched by
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
    labels: tuple[str, ...] = ()  # the issue's labels (a closed issue may carry the trigger)
    account: str = ""  # installation events: the account the App is installed on
    repos: tuple[str, ...] = ()  # installation events: the repositories added or removed
    config_changed: bool = False  # a push to another branch that may change .github/stepwise.yml
    sha: str = ""  # CI events: the commit whose checks changed
    check_name: str = ""  # CI events: the check run, workflow, suite's app or status context
    check_app: str = ""  # CI events: the slug of the app that reported it ("" for a status)
    check_app_id: int = 0
    check_run_id: int = 0  # check_run.rerequested: the run to publish again


class MalformedPayloadError(ValueError):
    """The payload lacks a field this event needs."""


def _get(data: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(data, dict) or key not in data:
            raise MalformedPayloadError(f"missing `{'.'.join(path)}`")
        data = data[key]
    return data


def _login(user: Any) -> str:
    """A user's login; '' for a null user (GitHub's "ghost") or an absent one."""
    return str(user.get("login") or "") if isinstance(user, dict) else ""


def _user_id(user: Any) -> int:
    """A user's account id (it stays when the login is renamed); 0 when absent."""
    value = user.get("id") if isinstance(user, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


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
    if event_name not in ("issues", "issue_comment", "pull_request", "push", *INSTALLATION_EVENTS,
                          *CI_EVENTS):
        return Event(kind=Kind.IGNORED, delivery_id=delivery_id, reason=f"event {event_name}")
    try:
        if event_name in INSTALLATION_EVENTS:
            return installation_event(event_name, str(action), delivery_id, payload)
        # GitHub's schema makes `installation` and (on pushes) `sender` optional: a missing
        # installation is looked up by the worker, a push without a sender names its pusher.
        sender = payload.get("sender")
        pusher = payload.get("pusher") if event_name == "push" else None
        common: dict[str, Any] = {
            "delivery_id": delivery_id,
            "repo": str(_get(payload, "repository", "full_name")),
            "installation_id": _number(payload, "installation", "id")
            if payload.get("installation") is not None else 0,
            "sender": _login(sender) or (str(pusher.get("name") or "")
                                         if isinstance(pusher, dict) else ""),
            "sender_id": _user_id(sender),
            "sender_is_bot": _is_bot(sender),
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


def installation_event(event_name: str, action: str, delivery_id: str,
                       payload: dict[str, Any]) -> Event:
    """installation.* and installation_repositories.*: the id, the account and the repositories
    the action names (all of them for installation.deleted and .suspend)."""
    installation = _get(payload, "installation")
    key = "repositories_removed" if action == "removed" else (
        "repositories_added" if action == "added" else "repositories")
    listed = payload.get(key) or []
    repos = tuple(str(r.get("full_name") or "") for r in listed if isinstance(r, dict))
    return Event(kind=Kind.INSTALLATION, delivery_id=delivery_id, reason=f"{event_name}.{action}",
                 installation_id=_number(payload, "installation", "id"),
                 account=_login(installation.get("account")), repos=repos,
                 sender=_login(payload.get("sender")))


def _label_names(issue: Any) -> tuple[str, ...]:
    labels = issue.get("labels") if isinstance(issue, dict) else None
    return tuple(str(lab.get("name") or "") for lab in labels or [] if isinstance(lab, dict))


def _touches(commits: Any, path: str) -> bool:
    """Whether a push may change `path` (a payload without a commit list may)."""
    if not isinstance(commits, list) or not commits:
        return True
    return any(isinstance(c, dict) and any(path in (c.get(k) or [])
                                           for k in ("added", "modified", "removed"))
               for c in commits)


def _route(event_name: str, action: str, payload: dict[str, Any], common: dict[str, Any]) -> Event:
    if event_name == "issues" and action in ("labeled", "edited", "closed", "reopened"):
        issue = _get(payload, "issue")
        fields = {**common, "number": int(_get(issue, "number")), "title": _text(issue.get("title")),
                  "body": _text(issue.get("body")), "author": _login(issue.get("user")),
                  "labels": _label_names(issue)}
        if action == "labeled":
            if not isinstance(payload.get("label"), dict):  # the schema allows it to be absent
                return Event(kind=Kind.IGNORED, reason="labeled without a label", **fields)
            return Event(kind=Kind.LABELED, label=str(_get(payload, "label", "name")), **fields)
        if action == "edited":
            if "body" not in (payload.get("changes") or {}):
                return Event(kind=Kind.IGNORED, reason="issue edited without a body change",
                             **fields)
            return Event(kind=Kind.ISSUE_EDITED, **fields)
        if action == "reopened":
            return Event(kind=Kind.ISSUE_REOPENED, **fields)
        return Event(kind=Kind.ISSUE_CLOSED, **fields)
    if event_name == "issue_comment" and action == "created":
        issue, comment = _get(payload, "issue"), _get(payload, "comment")
        return Event(
            kind=Kind.COMMENT, **{**common, "sender_is_bot": common["sender_is_bot"]
                                  or _is_bot(comment.get("user"))},
            number=int(_get(issue, "number")), comment_id=int(_get(comment, "id")),
            body=_text(comment.get("body")), author=_login(comment.get("user")),
            created_at=str(comment.get("created_at", "")),
            is_pull_request="pull_request" in issue,
        )
    if event_name == "pull_request" and action in ("closed", "reopened"):
        pull = _get(payload, "pull_request")
        kind = Kind.PULL_CLOSED if action == "closed" else Kind.PULL_REOPENED
        return Event(kind=kind, number=int(_get(pull, "number")), is_pull_request=True,
                     merged=bool(pull.get("merged")), head_ref=str(_get(pull, "head", "ref")),
                     **common)
    if event_name == "push":
        ref = str(_get(payload, "ref"))
        if not ref.startswith("refs/heads/stepwise/"):
            default = (payload.get("repository") or {}).get("default_branch")
            changed = ref == f"refs/heads/{default}" and _touches(payload.get("commits"),
                                                                  CONFIG_PATH)
            if ref == f"refs/heads/{default}":
                return Event(kind=Kind.BASE_PUSH, ref=ref, after=str(payload.get("after", "")),
                             config_changed=changed, **common)
            commits = payload.get("commits")
            branch_changed = ref.startswith("refs/heads/") and not payload.get("deleted") and \
                isinstance(commits, list) and bool(commits) and _touches(commits, CONFIG_PATH)
            if branch_changed:  # its `Stepwise config` check run shows on its pull request
                return Event(kind=Kind.CONFIG_PUSH, ref=ref, after=str(payload.get("after", "")),
                             **common)
            return Event(kind=Kind.IGNORED, reason="push to another branch", **common)
        return Event(kind=Kind.PUSH, ref=ref, after=str(payload.get("after", "")), **common)
    if event_name in CI_EVENTS:
        return ci_event(event_name, action, payload, common)
    return Event(kind=Kind.IGNORED, reason=f"{event_name}.{action}", **common)


def ci_event(event_name: str, action: str, payload: dict[str, Any], common: dict[str, Any]) -> Event:
    """A check run that appeared or completed, a check suite or workflow run that completed, or
    a commit status: the sha whose CI a waiting job may be waiting on, and who reported it
    (what else happens to a check changes nothing a waiting job shows)."""
    if event_name == "status":
        state = str(_get(payload, "state"))
        return Event(kind=Kind.CI, reason=f"status.{state}", sha=str(_get(payload, "sha")),
                     check_name=str(payload.get("context") or ""), **common)
    body = _get(payload, event_name)
    if event_name == "check_run" and action == "rerequested":
        app = body.get("app") if isinstance(body, dict) else None
        app = app if isinstance(app, dict) else {}
        return Event(kind=Kind.CHECK_RERUN, reason="check_run.rerequested",
                     sha=str(_get(body, "head_sha")), check_name=str(body.get("name") or ""),
                     check_app=str(app.get("slug") or ""), check_app_id=int(app.get("id") or 0),
                     check_run_id=int(_get(body, "id")), **common)
    if action != "completed" and not (event_name == "check_run" and action == "created"):
        return Event(kind=Kind.IGNORED, reason=f"{event_name}.{action}", **common)
    app = body.get("app") if isinstance(body, dict) else None
    if event_name == "workflow_run":
        app = {"slug": "github-actions", "id": 0}
    name = body.get("name") if event_name != "check_suite" else (app or {}).get("slug")
    return Event(kind=Kind.CI, reason=f"{event_name}.{action}", sha=str(_get(body, "head_sha")),
                 check_name=str(name or ""),
                 check_app=str(app.get("slug") or "") if isinstance(app, dict) else "",
                 check_app_id=int(app.get("id") or 0) if isinstance(app, dict) else 0, **common)
