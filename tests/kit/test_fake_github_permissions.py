"""The fake GitHub as strict as GitHub (tests/kit/github_permissions.py), driven by the real
githubkit client: the App permissions app.yml grants and the 403s without them, API versions,
custom roles and team membership, and the install guide's steps naming every permission."""

from __future__ import annotations

from typing import Any

import pytest
from githubkit import GitHub
from githubkit.exception import GraphQLFailed, RequestFailed

from tests.kit.fake_github_kit import NAME, OWNER, READY
from tests.kit.github import FakeGitHub


def test_installations_carry_the_permissions_app_yml_grants(gh: FakeGitHub) -> None:
    import yaml

    from tests.kit.github_permissions import APP_MANIFEST

    granted = yaml.safe_load(APP_MANIFEST.read_text())["default_permissions"]
    assert gh.installations[1].permissions == granted
    assert gh.issue_token(1).permissions == granted


def test_a_token_without_the_permission_gets_githubs_403(gh: FakeGitHub, client: GitHub[Any]) -> None:
    number = gh.add_issue(f"{OWNER}/{NAME}", "t", "b")
    gh.installations[1].permissions = {"metadata": "read"}
    client.rest.repos.get(OWNER, NAME)  # metadata is enough for the repository itself
    with pytest.raises(RequestFailed) as refused:
        client.rest.issues.create_comment(OWNER, NAME, number, body="hello")
    response = refused.value.response
    assert response.status_code == 403
    assert response.json()["message"] == "Resource not accessible by integration"
    assert response.headers["X-Accepted-GitHub-Permissions"] == "issues=write; pull_requests=write"
    assert gh.comments_on(f"{OWNER}/{NAME}", number) == []
    with pytest.raises(RequestFailed) as unread:
        client.rest.repos.get_content(OWNER, NAME, "README.md")
    assert unread.value.response.headers["X-Accepted-GitHub-Permissions"] == "contents=read"


def test_read_permission_does_not_allow_writes(gh: FakeGitHub, client: GitHub[Any]) -> None:
    number = gh.add_issue(f"{OWNER}/{NAME}", "t", "b")
    gh.installations[1].permissions = {"metadata": "read", "issues": "read"}
    assert client.rest.issues.get(OWNER, NAME, number).parsed_data.number == number
    with pytest.raises(RequestFailed) as refused:
        client.rest.issues.update(OWNER, NAME, number, title="x")
    assert refused.value.response.status_code == 403


def test_the_graphql_mutation_needs_pull_requests_write(gh: FakeGitHub, client: GitHub[Any]) -> None:
    gh.installations[1].permissions = {"metadata": "read", "issues": "write"}
    with pytest.raises(GraphQLFailed):
        client.graphql.request(READY, {"id": "PR_x"})


def test_every_route_names_the_permissions_github_accepts() -> None:
    from tests.kit.github_api import ROUTES

    undeclared = [f"{method} {pattern.pattern}" for method, pattern, _a, _h, needs in ROUTES if needs is None]
    assert undeclared == []


def test_an_unserved_api_version_is_400(gh: FakeGitHub, client: GitHub[Any]) -> None:
    assert client.rest("2022-11-28").repos.get(OWNER, NAME).parsed_data.name == NAME
    assert client.rest("2026-03-10").repos.get(OWNER, NAME).parsed_data.name == NAME  # github.com serves both
    gh.api_versions = ("2022-11-28",)
    with pytest.raises(RequestFailed) as refused:
        client.rest("2026-03-10").repos.get(OWNER, NAME)
    assert refused.value.response.status_code == 400
    assert "Supported versions: 2022-11-28" in refused.value.response.json()["message"]


def test_custom_roles_report_their_name_and_the_base_permission(gh: FakeGitHub, client: GitHub[Any]) -> None:
    gh.add_custom_role("release-manager", base="maintain")
    gh.set_permission(f"{OWNER}/{NAME}", "rel", "release-manager")
    data = client.rest.repos.get_collaborator_permission_level(OWNER, NAME, "rel").json()
    assert (data["role_name"], data["permission"]) == ("release-manager", "write")
    assert data["user"]["permissions"] == {"pull": True, "triage": True, "push": True, "maintain": True,
                                           "admin": False}
    with pytest.raises(ValueError, match="custom role"):
        gh.set_permission(f"{OWNER}/{NAME}", "x", "unknown-role")


def test_team_membership_endpoint(gh: FakeGitHub, client: GitHub[Any]) -> None:
    gh.add_team(OWNER, "release", ["tina"])
    teams = client.rest.teams
    assert teams.get_membership_for_user_in_org(OWNER, "release", "tina").json()["state"] == "active"
    for org, team, login in [(OWNER, "release", "rita"), (OWNER, "other", "tina"), ("elsewhere", "release",
                                                                                   "tina")]:
        with pytest.raises(RequestFailed) as missing:
            teams.get_membership_for_user_in_org(org, team, login)
        assert missing.value.response.status_code == 404
    for token in gh.tokens.values():  # a token keeps the permissions it was minted with
        token.permissions.pop("members")
    with pytest.raises(RequestFailed) as refused:
        teams.get_membership_for_user_in_org(OWNER, "release", "tina")
    assert refused.value.response.headers["X-Accepted-GitHub-Permissions"] == "members=read"


def test_a_suspended_installation_gets_no_token_and_its_tokens_are_refused(
        gh: FakeGitHub, client: GitHub[Any], app_key: tuple[str, str]) -> None:
    from githubkit import AppAuthStrategy

    client.rest.repos.get(OWNER, NAME)  # a token minted before the suspension
    gh.suspend(1, by="octo-owner")
    app = GitHub(AppAuthStrategy(gh.app_id, app_key[0]), base_url=gh.base_url, auto_retry=False,
                 trust_env=False)
    shown = app.rest.apps.get_installation(1).json()
    assert shown["suspended_by"]["login"] == "octo-owner" and shown["suspended_at"]
    with pytest.raises(RequestFailed) as no_token:
        app.rest.apps.create_installation_access_token(1)
    assert no_token.value.response.status_code == 403
    assert no_token.value.response.json()["message"] == "This installation has been suspended"
    with pytest.raises(RequestFailed) as old_token:
        client.rest.repos.get(OWNER, NAME)
    assert old_token.value.response.status_code == 403
    gh.suspend(1, by=None)
    assert client.rest.repos.get(OWNER, NAME).json()["name"] == NAME
    assert app.rest.apps.get_installation(1).json()["suspended_at"] is None
