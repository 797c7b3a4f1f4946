"""REST endpoints of the fake GitHub that campaigns use: the installation's repositories (with
topics, language, archived and fork, as GitHub lists them) and creating an issue."""

from __future__ import annotations

from tests.kit.github_api import REPO, ApiError, Call, Reply, paginate, route, too_long
from tests.kit.github_routes import ISSUES_WRITE

MAX_TITLE = 256  # GitHub refuses longer issue titles with 422


@route("GET", r"/installation/repositories", auth="token", permissions="metadata=read")
def list_installation_repositories(call: Call) -> Reply:
    assert call.token is not None  # an installation token (the route's default auth)
    inst = call.state.installations[call.token.installation_id]
    names = [n for n in inst.repos if call.token.repositories is None
             or n.split("/", 1)[1] in call.token.repositories]
    repos = [call.render.repository(call.state.repos[name]) for name in sorted(names)]
    reply = paginate(call, repos, "/installation/repositories")
    reply.body = {"total_count": len(repos), "repository_selection": "all",
                  "repositories": reply.body}
    return reply


@route("POST", REPO + r"/issues", permissions=ISSUES_WRITE)
def create_issue(call: Call) -> Reply:
    title, body = call.field("title"), call.field("body") or ""
    if not isinstance(title, str) or not title.strip():
        raise ApiError(422, "Validation Failed", [{"resource": "Issue", "code": "missing_field",
                                                   "field": "title"}])
    if len(title) > MAX_TITLE or len(body) > 65536:
        raise too_long("Issue")
    number = call.state.add_issue(call.r, title, body, user=call.state.bot_login,
                                  user_type="Bot", labels=list(call.field("labels") or []))
    call.state.effect(f"{call.r.full_name}#{number}:issue-created")
    return Reply(201, call.render.issue(call.r, call.r.issues[number]))


@route("GET", REPO + r"/issues", permissions="issues=read; pull_requests=read")
def list_issues(call: Call) -> Reply:
    """Issues (not pull requests), newest first, filtered by `creator`, `state` and `labels`
    (comma-separated, every one required, case-insensitive) as GitHub does."""
    state, creator = call.query.get("state", "open"), call.query.get("creator")
    wanted = {n.strip().casefold() for n in call.query.get("labels", "").split(",") if n.strip()}
    found = [i for i in sorted(call.r.issues.values(), key=lambda i: -i.number)
             if not i.is_pull and (state == "all" or i.state == state)
             and (creator is None or i.user == creator)
             and wanted <= {label.casefold() for label in i.labels}]
    return paginate(call, [call.render.issue(call.r, i) for i in found],
                    f"/repos/{call.r.full_name}/issues")


@route("GET", REPO + r"/collaborators", permissions="metadata=read")
def list_collaborators(call: Call) -> Reply:
    """Everyone with access (`affiliation=all`, the default), each with its permission flags as
    GitHub lists them; `outside`/`direct` narrow nothing here (the fake has no teams' access)."""
    affiliation = call.query.get("affiliation", "all")
    if affiliation not in ("all", "outside", "direct"):
        raise ApiError(422, "Validation Failed", [{"resource": "Collaborator", "code": "invalid",
                                                   "field": "affiliation"}])
    people = [call.render.permission(call.r, login)["user"]
              for login, role in sorted(call.r.collaborators.items()) if role != "none"]
    return paginate(call, people, f"/repos/{call.r.full_name}/collaborators")
