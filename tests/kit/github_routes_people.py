"""REST endpoints of the fake GitHub that reach people: a reaction on an issue, assignees, review
requests and the App's bot user, with GitHub's shapes and refusals."""

from __future__ import annotations

from tests.kit.github_api import REPO, ApiError, Call, Reply, invalid, route
from tests.kit.github_model import Reaction
from tests.kit.github_render import REACTIONS
from tests.kit.github_routes import ISSUES_WRITE, issue_of


@route("POST", REPO + r"/issues/(?P<number>\d+)/reactions", permissions=ISSUES_WRITE)
def create_issue_reaction(call: Call) -> Reply:
    """201 with the new reaction; 200 with the same one when the user already reacted so."""
    issue = issue_of(call)
    content = call.field("content")
    if content not in REACTIONS:
        error = {"resource": "Reaction", "code": "invalid", "field": "content"}
        raise ApiError(422, "Validation Failed", [error])
    state = call.state
    for existing in issue.reactions:
        if existing.content == content and existing.user == state.bot_login:
            return Reply(200, call.render.reaction(existing))
    reaction = Reaction(state.next_id("reaction"), content, state.bot_login, state.clock(), "Bot")
    issue.reactions.append(reaction)
    state.effect(f"{call.r.full_name}#{issue.number}:reaction:{content}")
    return Reply(201, call.render.reaction(reaction))


@route("POST", REPO + r"/issues/(?P<number>\d+)/assignees", permissions=ISSUES_WRITE)
def add_assignees(call: Call) -> Reply:
    """GitHub adds those who may be assigned (collaborators) and silently ignores the others."""
    issue = issue_of(call)
    logins = call.field("assignees") or []
    if not isinstance(logins, list):
        raise invalid("assignees must be a list", field_name="assignees")
    for login in logins:
        if str(login) in call.r.collaborators and login not in issue.assignees:
            issue.assignees.append(str(login))
            call.state.effect(f"{call.r.full_name}#{issue.number}:assigned:{login}")
    return Reply(201, call.render.issue(call.r, issue))


@route("POST", REPO + r"/pulls/(?P<number>\d+)/requested_reviewers",
       permissions="pull_requests=write")
def request_reviewers(call: Call) -> Reply:
    """422 for the pull request's author or someone who is no collaborator, as GitHub does."""
    pr = call.r.pulls.get(int(call.params["number"]))
    if pr is None:
        raise ApiError(404, "Not Found")
    logins = [str(login) for login in call.field("reviewers") or []]
    for login in logins:
        if login == pr.user:
            raise invalid("Review cannot be requested from pull request author.")
        if login not in call.r.collaborators:
            raise invalid("Reviews may only be requested from collaborators. One or more of the "
                          f"users or teams you specified is not a collaborator of the "
                          f"{call.r.full_name} repository.")
    for login in logins:
        if login not in pr.requested_reviewers:
            pr.requested_reviewers.append(login)
            call.state.effect(f"{call.r.full_name}#{pr.number}:review-requested:{login}")
    return Reply(201, call.render.pull(call.r, pr))
