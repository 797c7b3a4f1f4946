"""REST endpoints of the fake GitHub for organisations: team membership (the App's `members: read`)."""

from __future__ import annotations

from tests.kit.github_api import ApiError, Call, Reply, route


@route("GET", r"/orgs/(?P<org>[^/]+)/teams/(?P<team>[^/]+)/memberships/(?P<login>[^/]+)", auth="token",
       permissions="members=read")
def get_team_membership(call: Call) -> Reply:
    """200 with state `active` for a member; 404 for anyone else, a missing team or another org."""
    assert call.token is not None
    org, team, login = call.params["org"], call.params["team"], call.params["login"]
    inst = call.state.installations.get(call.token.installation_id)
    members = call.state.teams.get((org.lower(), team.lower()))
    if inst is None or inst.account.lower() != org.lower() or members is None or login.lower() not in members:
        raise ApiError(404, "Not Found")
    url = f"{call.render.api}/organizations/{org}/team/{team}/memberships/{login}"
    return Reply(200, {"url": url, "role": "member", "state": "active"})


@route("GET", r"/users/(?P<login>[^/]+)", auth="token", permissions="")  # public: no permission
def get_user(call: Call) -> Reply:
    """A user's public profile: its numeric id is what stays when the login is renamed
    (GitHubState.rename_user); a login renamed away and not claimed again is a 404."""
    login = call.params["login"]
    if login in call.state.freed_logins:
        raise ApiError(404, "Not Found")
    user = call.render.user(login)
    return Reply(200, {**user, "name": None, "company": None, "blog": "", "location": None,
                       "email": None, "hireable": None, "bio": None, "public_repos": 0,
                       "public_gists": 0, "followers": 0, "following": 0,
                       "created_at": "2020-01-01T00:00:00Z", "updated_at": "2020-01-01T00:00:00Z"})
