"""The fake GitHub's issues, comments and contents, driven by the real githubkit client over
loopback HTTP: comments created, listed, edited and reacted to, pagination, permission lookups
reported like GitHub, and reading contents."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from githubkit import GitHub
from githubkit.exception import RequestFailed
from githubkit_schemas.latest.models import Issue

from tests.kit.fake_github_kit import NAME, OWNER
from tests.kit.github import FakeGitHub


def test_comments_create_list_edit_and_react(gh: FakeGitHub, client: GitHub[Any]) -> None:
    number = gh.add_issue(f"{OWNER}/{NAME}", "Tidy imports", "Please tidy", user="alice")
    gh.add_comment(f"{OWNER}/{NAME}", number, "/stepwise approve", user="bob")
    issue = client.rest.issues.get(OWNER, NAME, number).parsed_data
    assert isinstance(issue, Issue) and issue.user and issue.user.login == "alice"
    created = client.rest.issues.create_comment(OWNER, NAME, number, body="Plan\n\ndetails").parsed_data
    assert created.user and (created.user.login, created.user.type) == ("stepwise[bot]", "Bot")
    listed = client.rest.issues.list_comments(OWNER, NAME, number).parsed_data
    assert [(c.user.login if c.user else None, c.body) for c in listed] == [
        ("bob", "/stepwise approve"), ("stepwise[bot]", "Plan\n\ndetails")]
    edited = client.rest.issues.update_comment(OWNER, NAME, created.id, body="Plan v2").parsed_data
    assert edited.body == "Plan v2"
    human = listed[0].id
    first = client.rest.reactions.create_for_issue_comment(OWNER, NAME, human, content="+1")
    again = client.rest.reactions.create_for_issue_comment(OWNER, NAME, human, content="+1")
    assert (first.status_code, again.status_code) == (201, 200)
    assert first.parsed_data.id == again.parsed_data.id and first.parsed_data.content == "+1"
    assert gh.effects == [f"{OWNER}/{NAME}#1:comment-created:Plan",
                          f"{OWNER}/{NAME}#1:comment-edited:{created.id}",
                          f"{OWNER}/{NAME}#comment-{human}:reaction:+1"]
    assert [c.body for c in gh.comments_on(f"{OWNER}/{NAME}", number)] == ["/stepwise approve", "Plan v2"]


def test_pagination_of_120_comments(gh: FakeGitHub, client: GitHub[Any]) -> None:
    number = gh.add_issue(f"{OWNER}/{NAME}", "Long", "")
    for i in range(120):
        gh.add_comment(f"{OWNER}/{NAME}", number, f"comment {i}")
    paged = client.rest.paginate(client.rest.issues.list_comments, owner=OWNER, repo=NAME,
                                 issue_number=number, per_page=50)
    assert [c.body for c in paged] == [f"comment {i}" for i in range(120)]
    assert [r.query.get("page", "1") for r in gh.requests_to("GET", "/comments$")] == ["1", "2", "3"]
    second = client.rest.issues.list_comments(OWNER, NAME, number, per_page=100, page=2)
    assert len(second.parsed_data) == 20
    assert 'rel="first"' in second.headers["link"] and 'rel="next"' not in second.headers["link"]


def test_permission_lookup_reports_roles_like_github(gh: FakeGitHub, client: GitHub[Any]) -> None:
    for login, role in [("maya", "maintain"), ("tom", "triage"), ("ada", "admin"), ("wes", "write")]:
        gh.set_permission(f"{OWNER}/{NAME}", login, role)
    seen = {login: client.rest.repos.get_collaborator_permission_level(OWNER, NAME, login).parsed_data
            for login in ("maya", "tom", "ada", "wes", "stranger")}
    assert {k: (v.permission, v.role_name) for k, v in seen.items()} == {
        "maya": ("write", "maintain"), "tom": ("read", "triage"), "ada": ("admin", "admin"),
        "wes": ("write", "write"), "stranger": ("read", "read")}


def test_contents_read(gh: FakeGitHub, client: GitHub[Any]) -> None:
    found = client.rest.repos.get_content(OWNER, NAME, ".github/stepwise.yml").parsed_data
    assert base64.b64decode(found.content) == b"trigger_label: stepwise\n"  # type: ignore[union-attr]
    gh.push_files(f"{OWNER}/{NAME}", "other", {"src/a.py": "x = 2\n"}, "edit")
    on_branch = client.rest.repos.get_content(OWNER, NAME, "src/a.py", ref="other").parsed_data
    assert base64.b64decode(on_branch.content) == b"x = 2\n"  # type: ignore[union-attr]
    with pytest.raises(RequestFailed) as missing:
        client.rest.repos.get_content(OWNER, NAME, "nope.txt")
    assert missing.value.response.status_code == 404
