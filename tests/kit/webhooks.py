"""Recorded-style webhook deliveries: load a payload, fill in its values, sign it, post the raw bytes.

    payload = make_event("issue_comment.created", repo=fake_repo, issue_number=3,
                         comment_body="/stepwise approve", sender="bob")
    response = deliver(client, "issue_comment", payload, secret="s3cret")

The files under payloads/ describe repository octo-org/widgets, installation 1, issue #1 (labelled
`stepwise`, by alice), comment 1001 by bob, and pull request #2 from `stepwise/issue-1` by stepwise[bot].
They pass githubkit's strict webhook models (githubkit.webhooks.parse_obj).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import uuid
import zlib
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

import httpx

from tests.kit.github_model import FakeRepo
from tests.kit.loopback import TLS

PAYLOADS = Path(__file__).parent / "payloads"
WEBHOOK_PATH = "/webhooks/github"
CANON_OWNER, CANON_NAME = "octo-org", "widgets"
EVENT_NAMES = sorted(p.name.removesuffix(".json") for p in PAYLOADS.glob("*.json"))
OVERRIDES = (
    "repo", "installation_id", "sender", "sender_type", "issue_number", "issue_title", "issue_body",
    "issue_user", "issue_user_type", "issue_state", "labels", "label", "comment_id", "comment_body",
    "comment_user", "comment_user_type", "changes", "pr_number", "pr_title", "pr_body", "head_ref",
    "head_sha", "base_ref", "merged", "merge_commit_sha", "ref", "before", "after",
)


def load(name: str) -> dict[str, Any]:
    """A fresh copy of payloads/<name>.json (e.g. 'issues.labeled', 'pull_request.closed.merged')."""
    path = PAYLOADS / f"{name}.json"
    if not path.exists():
        raise ValueError(f"no recorded payload {name!r}; have {EVENT_NAMES}")
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def event_header(name: str) -> str:
    """The X-GitHub-Event value of a payload name: 'issue_comment.created.pull_request' is issue_comment."""
    return name.split(".", 1)[0]


def login_id(login: str) -> int:
    """The account id a login gets in recorded payloads and on the fake GitHub (until renamed)."""
    return zlib.crc32(login.encode()) % 10_000_000


def user(login: str, user_type: str = "User") -> dict[str, Any]:
    uid = login_id(login)
    url = f"https://api.github.com/users/{login}"
    return {
        "login": login, "id": uid, "node_id": f"U_fake{uid}",
        "avatar_url": f"https://avatars.githubusercontent.com/u/{uid}?v=4", "gravatar_id": "", "url": url,
        "html_url": f"https://github.com/{login.removesuffix('[bot]')}", "followers_url": f"{url}/followers",
        "following_url": f"{url}/following{{/other_user}}", "gists_url": f"{url}/gists{{/gist_id}}",
        "starred_url": f"{url}/starred{{/owner}}{{/repo}}", "subscriptions_url": f"{url}/subscriptions",
        "organizations_url": f"{url}/orgs", "repos_url": f"{url}/repos",
        "events_url": f"{url}/events{{/privacy}}", "received_events_url": f"{url}/received_events",
        "type": user_type, "user_view_type": "public",
        "site_admin": False,
    }


def label(name: str, full_name: str = f"{CANON_OWNER}/{CANON_NAME}") -> dict[str, Any]:
    label_id = zlib.crc32(f"{full_name}:{name}".encode())
    return {"id": label_id, "node_id": f"LA_fake{label_id}", "url": f"https://api.github.com/repos/{full_name}"
            f"/labels/{name}", "name": name, "color": "ededed", "default": False, "description": None,
            "archived_at": None, "archived_by": None}


def _replace_strings(value: Any, old: str, new: str) -> Any:
    if isinstance(value, str):
        return value.replace(old, new)
    if isinstance(value, list):
        return [_replace_strings(v, old, new) for v in value]
    if isinstance(value, dict):
        return {k: _replace_strings(v, old, new) for k, v in value.items()}
    return value


def _repo_dicts(value: Any) -> list[dict[str, Any]]:
    """Every repository object in the payload (top-level and nested in pull request heads and bases)."""
    found = []
    if isinstance(value, dict):
        if "full_name" in value and "clone_url" in value:
            found.append(value)
        for v in value.values():
            found += _repo_dicts(v)
    elif isinstance(value, list):
        for v in value:
            found += _repo_dicts(v)
    return found


def _apply_repo(payload: dict[str, Any], repo: FakeRepo | str) -> dict[str, Any]:
    owner, name = (repo.owner, repo.name) if isinstance(repo, FakeRepo) else repo.split("/", 1)
    payload = _replace_strings(payload, f"{CANON_OWNER}/{CANON_NAME}", f"{owner}/{name}")
    payload = _replace_strings(payload, f"/{CANON_OWNER}", f"/{owner}")
    payload = _replace_strings(payload, f"{CANON_OWNER}:", f"{owner}:")
    for r in _repo_dicts(payload):
        r["name"], r["owner"]["login"] = name, owner
        if isinstance(repo, FakeRepo):
            r.update(id=repo.id, node_id=repo.node_id, clone_url=repo.clone_url, private=repo.private,
                     default_branch=repo.default_branch, visibility="private" if repo.private else "public")
            if "master_branch" in r:
                r["master_branch"] = repo.default_branch
    if isinstance(payload.get("organization"), dict):
        payload["organization"]["login"] = owner
    for listed in payload.get("repositories", []):
        listed.update(name=name, full_name=f"{owner}/{name}")
        if isinstance(repo, FakeRepo):
            listed.update(id=repo.id, node_id=repo.node_id, private=repo.private)
    return payload


def _renumber(obj: dict[str, Any], old: int, new: int) -> dict[str, Any]:
    """Rewrite /issues/<old>, /pull/<old> and /pulls/<old> in every URL inside `obj`."""
    pattern = re.compile(rf"/(issues|pulls?)/{old}(?=$|[/#.])")

    def fix(value: Any) -> Any:
        if isinstance(value, str):
            return pattern.sub(rf"/\g<1>/{new}", value)
        if isinstance(value, list):
            return [fix(v) for v in value]
        if isinstance(value, dict):
            return {k: fix(v) for k, v in value.items()}
        return value

    fixed: dict[str, Any] = fix(obj)
    return fixed


def make_event(name: str, **overrides: Any) -> dict[str, Any]:
    """Load payloads/<name>.json and fill in the values given (see OVERRIDES); unknown keys are an error."""
    unknown = set(overrides) - set(OVERRIDES)
    if unknown:
        raise TypeError(f"unknown override(s) {sorted(unknown)}; allowed: {OVERRIDES}")
    payload = load(name)
    o = overrides
    if "repo" in o:
        payload = _apply_repo(payload, o["repo"])
    full_name = payload.get("repository", {}).get("full_name", f"{CANON_OWNER}/{CANON_NAME}")
    if "installation_id" in o and "installation" in payload:
        payload["installation"]["id"] = o["installation_id"]
    if "sender" in o:
        payload["sender"] = user(o["sender"], o.get("sender_type", "User"))
    issue = payload.get("issue")
    if issue is not None:
        if "issue_number" in o:
            payload["issue"] = issue = _renumber(issue, issue["number"], o["issue_number"])
            issue["number"] = o["issue_number"]
            if "comment" in payload:
                old = _issue_number_in(payload["comment"])
                payload["comment"] = _renumber(payload["comment"], old, o["issue_number"])
        for key in ("title", "body", "state"):
            if f"issue_{key}" in o:
                issue[key] = o[f"issue_{key}"]
        if "issue_user" in o:
            issue["user"] = user(o["issue_user"], o.get("issue_user_type", "User"))
        if "labels" in o:
            issue["labels"] = [label(n, full_name) for n in o["labels"]]
    if "label" in o:
        payload["label"] = label(o["label"], full_name)
        if issue is not None and o["label"] not in [lab["name"] for lab in issue["labels"]]:
            issue["labels"].append(payload["label"])
    comment = payload.get("comment")
    if comment is not None:
        if "comment_id" in o:
            old, new = comment["id"], o["comment_id"]
            for key in ("url", "html_url"):
                comment[key] = re.sub(rf"(comments/|issuecomment-){old}\b", rf"\g<1>{new}", comment[key])
            comment["id"] = new
        if "comment_body" in o:
            comment["body"] = o["comment_body"]
        commenter = o.get("comment_user", o.get("sender"))
        if commenter is not None:
            comment["user"] = user(commenter, o.get("comment_user_type", o.get("sender_type", "User")))
    if "changes" in o:
        payload["changes"] = o["changes"]
    if "pull_request" in payload:
        _apply_pull(payload, o)
    for key in ("ref", "before", "after"):
        if key in o:
            payload[key] = o[key]
    return payload


def _issue_number_in(comment: dict[str, Any]) -> int:
    return int(comment["issue_url"].rsplit("/", 1)[-1])


def _apply_pull(payload: dict[str, Any], o: dict[str, Any]) -> None:
    pr = payload["pull_request"]
    if "pr_number" in o:
        pr = payload["pull_request"] = _renumber(pr, pr["number"], o["pr_number"])
        pr["number"] = payload["number"] = o["pr_number"]
    for key, field_name in (("pr_title", "title"), ("pr_body", "body")):
        if key in o:
            pr[field_name] = o[key]
    if "head_ref" in o:
        pr["head"]["ref"] = o["head_ref"]
        pr["head"]["label"] = f"{pr['head']['label'].split(':')[0]}:{o['head_ref']}"
    if "head_sha" in o:
        pr["head"]["sha"] = o["head_sha"]
    if "base_ref" in o:
        pr["base"]["ref"] = o["base_ref"]
        pr["base"]["label"] = f"{pr['base']['label'].split(':')[0]}:{o['base_ref']}"
    if "merged" in o:
        merged = bool(o["merged"])
        pr["merged"] = merged
        pr["merged_at"] = pr["closed_at"] if merged else None
        pr["merged_by"] = (pr["merged_by"] or payload["sender"]) if merged else None
        if not merged:
            pr["merge_commit_sha"] = None
    if "merge_commit_sha" in o:
        pr["merge_commit_sha"] = o["merge_commit_sha"]


def sign(secret: str | bytes, body: bytes) -> str:
    """GitHub's X-Hub-Signature-256 value for `body`."""
    key = secret.encode() if isinstance(secret, str) else secret
    return "sha256=" + hmac.new(key, body, hashlib.sha256).hexdigest()


def deliver(
    target: httpx.Client | str,
    event: str,
    payload: dict[str, Any] | bytes,
    *,
    secret: str | bytes,
    delivery_id: str | None = None,
    signature: str | None = None,
    unsigned: bool = False,
    path: str = WEBHOOK_PATH,
    form: bool = False,
) -> httpx.Response:
    """POST the raw JSON bytes like GitHub does, to `path` on a client (httpx or FastAPI TestClient) or URL.

    `event` is the X-GitHub-Event value ('issues'; a payload name like 'issues.labeled' is cut down to it).
    A URL with no path gets `path` appended. `signature` replaces the computed one; `unsigned` drops it.
    `form` sends the content type an App may choose instead of JSON: `payload=<url-encoded JSON>`, signed
    over those raw form bytes.
    """
    body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    if form and not isinstance(payload, bytes):
        body = urlencode({"payload": body.decode()}).encode()
    key = secret.encode() if isinstance(secret, str) else secret
    headers = {
        "X-GitHub-Event": event_header(event),
        "X-GitHub-Delivery": delivery_id or str(uuid.uuid4()),
        "X-GitHub-Hook-ID": "109948940",
        "X-GitHub-Hook-Installation-Target-Type": "integration",
        "X-GitHub-Hook-Installation-Target-ID": "4242",
        "X-Hub-Signature": "sha1=" + hmac.new(key, body, hashlib.sha1).hexdigest(),
        "X-Hub-Signature-256": signature or sign(key, body),
        "Content-Type": "application/x-www-form-urlencoded" if form else "application/json",
        "User-Agent": "GitHub-Hookshot/fake",
    }
    if unsigned:
        del headers["X-Hub-Signature"], headers["X-Hub-Signature-256"]
    if isinstance(target, str):
        url = target if urlsplit(target).path not in ("", "/") else target.rstrip("/") + path
        return httpx.post(url, content=body, headers=headers, trust_env=False, timeout=30,
                          verify=TLS)
    return target.post(path, content=body, headers=headers)
