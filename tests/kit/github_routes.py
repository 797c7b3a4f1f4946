"""REST endpoints of the fake GitHub for the App, repositories, contents, permissions and issues."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from tests.kit.github_api import (
    JWT_ONLY,
    LABEL_MAX_CHARS,
    REPO,
    SUSPENDED,
    ApiError,
    Call,
    Reply,
    check_text_fields,
    paginate,
    route,
    too_long,
)
from tests.kit.github_model import Reaction
from tests.kit.github_render import REACTIONS

METADATA = "metadata=read"
# Issue endpoints serve pull requests too: either permission set is accepted.
ISSUES_READ = "issues=read; pull_requests=read"
ISSUES_WRITE = "issues=write; pull_requests=write"

# --- App endpoints ----------------------------------------------------------------------------


@route("POST", r"/app/installations/(?P<iid>\d+)/access_tokens", auth="jwt", permissions=JWT_ONLY)
def create_access_token(call: Call) -> Reply:
    inst = call.state.installations.get(int(call.params["iid"]))
    if inst is None:
        raise ApiError(404, "Not Found")
    if inst.suspended_at is not None:  # GitHub mints no token for a suspended installation
        raise ApiError(403, SUSPENDED)
    names = call.field("repositories")
    ids = call.field("repository_ids")
    if ids:
        by_id = {r.id: r.name for r in call.state.repos.values()}
        names = [*(names or []), *(by_id.get(i, f"#{i}") for i in ids)]
    if names and any(f"{inst.account}/{n}" not in inst.repos for n in names):
        raise ApiError(422, "There is at least one repository that does not exist or is not accessible "
                            "to the parent installation.")
    token = call.state.issue_token(inst.id, repositories=names or None, permissions=call.field("permissions"))
    body = {"token": token.token, "expires_at": token.expires_at.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "permissions": token.permissions, "repository_selection": "selected" if names else "all"}
    if names:
        repos = [call.state.repos[f"{inst.account}/{n}"] for n in names]
        body["repositories"] = [call.render.repository(r) for r in repos]
    return Reply(201, body)


@route("GET", r"/app/installations/(?P<iid>\d+)", auth="jwt", permissions=JWT_ONLY)
def get_installation(call: Call) -> Reply:
    inst = call.state.installations.get(int(call.params["iid"]))
    if inst is None:
        raise ApiError(404, "Not Found")
    return Reply(200, call.render.installation(inst))


@route("GET", REPO + "/installation", auth="jwt", permissions=JWT_ONLY)
def get_repo_installation(call: Call) -> Reply:
    full_name = f"{call.params['owner']}/{call.params['name']}"
    for inst in call.state.installations.values():
        if full_name in inst.repos:
            return Reply(200, call.render.installation(inst))
    raise ApiError(404, "Not Found")


# --- Repository, contents, permissions --------------------------------------------------------


@route("GET", REPO, permissions=METADATA)
def get_repo(call: Call) -> Reply:
    return Reply(200, call.render.full_repository(call.r))


@route("GET", REPO + r"/contents(?:/(?P<path>.*))?", permissions="contents=read")
def get_contents(call: Call) -> Reply:
    ref = call.query.get("ref") or call.r.default_branch
    found = call.render.content(call.r, (call.params.get("path") or "").strip("/"), ref)
    if found is None:
        raise ApiError(404, "Not Found")
    return Reply(200, found)


@route("GET", REPO + r"/collaborators/(?P<login>[^/]+)/permission", permissions=METADATA)
def get_permission(call: Call) -> Reply:
    return Reply(200, call.render.permission(call.r, call.params["login"]))


# --- Issues, comments, reactions, labels ------------------------------------------------------


def issue_of(call: Call) -> Any:
    issue = call.r.issues.get(int(call.params["number"]))
    if issue is None:
        raise ApiError(404, "Not Found")
    return issue


@route("GET", REPO + r"/issues/(?P<number>\d+)", permissions=ISSUES_READ)
def get_issue(call: Call) -> Reply:
    return Reply(200, call.render.issue(call.r, issue_of(call)))


@route("PATCH", REPO + r"/issues/(?P<number>\d+)", permissions=ISSUES_WRITE)
def update_issue(call: Call) -> Reply:
    issue, where = issue_of(call), f"{call.r.full_name}#{call.params['number']}"
    check_text_fields(call, "Issue")
    for key in ("title", "body"):
        if key in call.data and call.data[key] != getattr(issue, key):
            setattr(issue, key, call.data[key])
            call.state.effect(f"{where}:{'pr' if issue.is_pull else 'issue'}-{key}-updated")
    if "labels" in call.data:
        names = [x if isinstance(x, str) else x["name"] for x in call.data["labels"]]
        call.state.set_labels(call.r, issue.number, add=names,
                              remove=[n for n in issue.labels if n not in names], log=True)
    if call.data.get("state") == "closed":
        reason = call.data.get("state_reason") or "completed"
        call.state.close_issue(call.r, issue.number, reason=reason, log=True)
    elif call.data.get("state") == "open" and issue.state == "closed":
        issue.state, issue.state_reason, issue.closed_at = "open", "reopened", None
        call.state.effect(f"{where}:{'pr' if issue.is_pull else 'issue'}-reopened")
    issue.updated_at = call.state.clock()
    return Reply(200, call.render.issue(call.r, issue))


@route("GET", REPO + r"/issues/(?P<number>\d+)/comments", permissions=ISSUES_READ)
def list_comments(call: Call) -> Reply:
    comments = issue_of(call).comments
    if since := call.query.get("since"):
        cutoff = datetime.fromisoformat(since.replace("Z", "+00:00"))
        comments = [c for c in comments if c.updated_at >= cutoff]
    rendered = [call.render.comment(call.r, c) for c in comments]
    return paginate(call, rendered, f"/repositories/{call.r.id}/issues/{call.params['number']}/comments")


@route("POST", REPO + r"/issues/(?P<number>\d+)/comments", permissions=ISSUES_WRITE)
def create_comment(call: Call) -> Reply:
    issue = issue_of(call)
    body = call.field("body")
    if not isinstance(body, str) or not body:
        raise ApiError(422, "Validation Failed", [{"resource": "IssueComment", "code": "missing_field",
                                                   "field": "body"}])
    check_text_fields(call, "IssueComment")
    bot = call.state.bot_login
    comment = call.state.add_comment(call.r, issue.number, body, bot, user_type="Bot", log=True)
    return Reply(201, call.render.comment(call.r, comment))


def comment_of(call: Call) -> Any:
    comment = call.state.find_comment(call.r, int(call.params["cid"]))
    if comment is None:
        raise ApiError(404, "Not Found")
    return comment


@route("GET", REPO + r"/issues/comments/(?P<cid>\d+)", permissions=ISSUES_READ)
def get_comment(call: Call) -> Reply:
    return Reply(200, call.render.comment(call.r, comment_of(call)))


@route("PATCH", REPO + r"/issues/comments/(?P<cid>\d+)", permissions=ISSUES_WRITE)
def update_comment(call: Call) -> Reply:
    comment = comment_of(call)
    body = call.field("body")
    if not isinstance(body, str) or not body:
        raise ApiError(422, "Validation Failed", [{"resource": "IssueComment", "code": "missing_field"}])
    check_text_fields(call, "IssueComment")
    if comment.user != call.state.bot_login:
        raise ApiError(403, "Resource not accessible by integration")
    comment.body, comment.updated_at = body, call.state.clock()
    call.state.effect(f"{call.r.full_name}#{comment.issue_number}:comment-edited:{comment.id}")
    return Reply(200, call.render.comment(call.r, comment))


@route("POST", REPO + r"/issues/comments/(?P<cid>\d+)/reactions", permissions=ISSUES_WRITE)
def create_reaction(call: Call) -> Reply:
    comment = comment_of(call)
    content = call.field("content")
    if content not in REACTIONS:
        error = {"resource": "Reaction", "code": "invalid", "field": "content"}
        raise ApiError(422, "Validation Failed", [error])
    for existing in comment.reactions:
        if existing.content == content and existing.user == call.state.bot_login:
            return Reply(200, call.render.reaction(existing))
    state = call.state
    reaction = Reaction(state.next_id("reaction"), content, state.bot_login, state.clock(), "Bot")
    comment.reactions.append(reaction)
    call.state.effect(f"{call.r.full_name}#comment-{comment.id}:reaction:{content}")
    return Reply(201, call.render.reaction(reaction))


@route("POST", REPO + r"/issues/(?P<number>\d+)/labels", permissions=ISSUES_WRITE)
def add_labels(call: Call) -> Reply:
    issue = issue_of(call)
    names = call.body.get("labels", []) if isinstance(call.body, dict) else call.body
    names = [n if isinstance(n, str) else n["name"] for n in names]
    if any(len(n) > LABEL_MAX_CHARS for n in names):
        raise too_long("Label", "name", LABEL_MAX_CHARS)
    call.state.set_labels(call.r, issue.number, add=names, log=True)
    return Reply(200, [call.render.label(call.r, n) for n in issue.labels])


@route("DELETE", REPO + r"/issues/(?P<number>\d+)/labels/(?P<label>[^/]+)", permissions=ISSUES_WRITE)
def remove_label(call: Call) -> Reply:
    issue = issue_of(call)
    if call.params["label"] not in issue.labels:
        raise ApiError(404, "Label does not exist")
    call.state.set_labels(call.r, issue.number, remove=[call.params["label"]], log=True)
    return Reply(200, [call.render.label(call.r, n) for n in issue.labels])
