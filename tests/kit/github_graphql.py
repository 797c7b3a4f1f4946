"""The fake GitHub's GraphQL endpoint: only markPullRequestReadyForReview and convertPullRequestToDraft."""

from __future__ import annotations

import re
from typing import Any

from tests.kit.github_api import ApiError, Call, Reply, authenticate, can_access
from tests.kit.github_model import FakeRepo, PullRequest
from tests.kit.github_permissions import missing_permission

UNSUPPORTED = "The fake GitHub supports only markPullRequestReadyForReview and convertPullRequestToDraft"
MUTATIONS = {"markPullRequestReadyForReview": False, "convertPullRequestToDraft": True}


def find_pull(call: Call, node_id: str) -> tuple[FakeRepo, PullRequest] | None:
    assert call.token is not None
    for repo in call.state.repos.values():
        for pr in repo.pulls.values():
            if pr.node_id == node_id and can_access(call.state, call.token, repo):
                return repo, pr
    return None


def pull_request_id(query: str, variables: dict[str, Any]) -> Any:
    """The `pullRequestId` given inline, through a variable, or inside an `input` variable."""
    if m := re.search(r"pullRequestId\s*:\s*(?:\$(\w+)|\"([^\"]*)\")", query):
        return variables.get(m[1]) if m[1] else m[2]
    if m := re.search(r"input\s*:\s*\$(\w+)", query):
        value = variables.get(m[1])
        return value.get("pullRequestId") if isinstance(value, dict) else None
    return None


def graphql(call: Call) -> Reply:
    try:
        authenticate(call, "token", lambda _token: "unused")
    except ApiError as error:
        return Reply(401, {"message": error.message, "documentation_url": "https://docs.github.com/graphql"})
    if missing_permission(call.token.permissions if call.token else {}, "pull_requests=write"):
        return Reply(200, {"data": None, "errors": [{
            "type": "FORBIDDEN", "message": "Resource not accessible by integration",
        }]}, {"X-Accepted-GitHub-Permissions": "pull_requests=write"})
    query = str(call.field("query", ""))
    variables = call.field("variables") or {}
    name = next((n for n in MUTATIONS if re.search(rf"\b{n}\b", query)), None)
    if name is None:
        return Reply(200, {"errors": [{"message": UNSUPPORTED}]})
    node_id = pull_request_id(query, variables)
    found = find_pull(call, str(node_id)) if node_id else None
    if found is None:
        return Reply(200, {"data": {name: None}, "errors": [{
            "type": "NOT_FOUND", "path": [name], "locations": [{"line": 1, "column": 1}],
            "message": f"Could not resolve to a node with the global id of '{node_id}'",
        }]})
    repo, pr = found
    draft = MUTATIONS[name]
    if pr.state != "open":
        return Reply(200, {"data": {name: None}, "errors": [{
            "type": "UNPROCESSABLE", "path": [name], "message": "Pull request is closed",
        }]})
    if pr.draft != draft:
        pr.draft = draft
        pr.updated_at = call.state.clock()
        call.state.effect(f"{repo.full_name}#{pr.number}:{'pr-draft' if draft else 'pr-ready'}")
    result = {"id": pr.node_id, "number": pr.number, "isDraft": pr.draft, "state": pr.state.upper(),
              "url": call.render.issue(repo, pr)["html_url"]}
    return Reply(200, {"data": {name: {"clientMutationId": None, "pullRequest": result}}})
