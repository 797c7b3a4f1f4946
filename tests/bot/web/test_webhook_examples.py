"""Every payload of @octokit/webhooks-examples through the signed endpoint: no 5xx, no 400, and the
events the App handles normalised to what the payload says (an oracle reading the raw fields)."""

from __future__ import annotations

import json
import uuid
from typing import Any

import httpx

from bot.events import Kind, normalise
from tests.bot.conftest import SECRET, World
from tests.kit.npm_fixtures import webhook_examples
from tests.kit.webhooks import deliver

HANDLED = {("issues", "labeled"), ("issues", "edited"), ("issues", "closed"),
           ("issues", "reopened"), ("issue_comment", "created"), ("pull_request", "closed"),
           ("pull_request", "reopened")}


def login(user: Any) -> str:
    return str(user.get("login") or "") if isinstance(user, dict) else ""


def expected(event: str, payload: dict[str, Any]) -> dict[str, Any]:
    """What the normalised event must say, read straight from the payload."""
    action = payload.get("action")
    if event in ("installation", "installation_repositories"):
        return {"kind": Kind.INSTALLATION, "installation_id": payload["installation"]["id"],
                "account": login(payload["installation"].get("account")),
                "reason": f"{event}.{action}"}
    if event in ("check_run", "check_suite", "status", "workflow_run"):
        return expected_ci(event, payload)
    if event not in ("issues", "issue_comment", "pull_request", "push"):
        return {"kind": Kind.IGNORED}
    common = {"repo": payload["repository"]["full_name"],
              "installation_id": (payload.get("installation") or {}).get("id", 0)}
    if event == "push":
        pusher = login(payload.get("sender")) or payload["pusher"]["name"]
        stepwise = payload["ref"].startswith("refs/heads/stepwise/")
        base = payload["ref"] == f"refs/heads/{payload['repository'].get('default_branch')}"
        commits = payload.get("commits")
        config = bool(commits) and any(".github/stepwise.yml" in (c.get(k) or [])
                                       for c in commits for k in ("added", "modified", "removed"))
        branch = payload["ref"].startswith("refs/heads/") and not payload.get("deleted")
        other = Kind.CONFIG_PUSH if config and branch else Kind.IGNORED
        kind = Kind.PUSH if stepwise else Kind.BASE_PUSH if base else other
        return {**common, "kind": kind, "sender": pusher}
    if (event, action) not in HANDLED:
        return {**common, "kind": Kind.IGNORED}
    if event == "pull_request":
        pull = payload["pull_request"]
        kind = Kind.PULL_CLOSED if action == "closed" else Kind.PULL_REOPENED
        return {**common, "kind": kind, "number": pull["number"],
                "merged": bool(pull["merged"]), "head_ref": pull["head"]["ref"]}
    issue = payload["issue"]
    if event == "issue_comment":
        return {**common, "kind": Kind.COMMENT, "number": issue["number"],
                "comment_id": payload["comment"]["id"], "author": login(payload["comment"]["user"]),
                "is_pull_request": "pull_request" in issue, "sender": login(payload["sender"])}
    fields = {**common, "number": issue["number"], "author": login(issue.get("user")),
              "sender": login(payload.get("sender"))}
    if action == "labeled":
        return {**fields, "kind": Kind.LABELED, "label": payload["label"]["name"]}
    if action == "edited":
        changed = "body" in (payload.get("changes") or {})
        return {**fields, "kind": Kind.ISSUE_EDITED if changed else Kind.IGNORED}
    return {**fields, "kind": Kind.ISSUE_CLOSED if action == "closed" else Kind.ISSUE_REOPENED}


def expected_ci(event: str, payload: dict[str, Any]) -> dict[str, Any]:
    """CI events: a check run created or completed, a suite or workflow run completed, any
    commit status; each names its commit and who reported it. A check run re-run ("Re-run",
    `rerequested`) names the run."""
    common = {"repo": payload["repository"]["full_name"]}
    action = payload.get("action")
    if (event, action) == ("check_run", "rerequested"):
        body = payload[event]
        return {**common, "kind": Kind.CHECK_RERUN, "sha": body["head_sha"],
                "check_run_id": body["id"]}
    if event == "status":
        return {**common, "kind": Kind.CI, "sha": payload["sha"], "check_app": ""}
    if action != "completed" and (event, action) != ("check_run", "created"):
        return {**common, "kind": Kind.IGNORED}
    body = payload[event]
    app = "github-actions" if event == "workflow_run" else (body.get("app") or {}).get("slug", "")
    return {**common, "kind": Kind.CI, "sha": body["head_sha"], "check_app": app or ""}


def test_every_recorded_payload_is_accepted_and_normalised(world: World) -> None:
    examples = webhook_examples()
    assert len(examples) >= 400  # 404 distinct payloads in 7.6.1
    answers: dict[int, list[str]] = {}
    mismatches = []
    with httpx.Client(base_url=world.url, trust_env=False, timeout=30) as client:
        for event, payload in examples:
            name = f"{event}.{payload.get('action', '')}"
            response = deliver(client, event, json.dumps(payload).encode(), secret=SECRET,
                               delivery_id=str(uuid.uuid4()))
            answers.setdefault(response.status_code, []).append(name)
            want = expected(event, payload)
            got = normalise(event, "d", payload)
            if {key: getattr(got, key) for key in want} != want:
                mismatches.append((name, want, got))
    assert set(answers) == {202}, {status: names[:5] for status, names in answers.items()}
    assert mismatches == []
    handled = [(e, p) for e, p in examples if expected(e, p)["kind"] is not Kind.IGNORED]
    assert len(handled) >= 20  # labeled, edited, comments, closes, pushes, installations
