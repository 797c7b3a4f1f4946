"""The installation client (bot/github/client.py) driving the real githubkit client against the
loopback fake: repositories, files, issues, comments, permissions, teams, pull requests, and
reads of answers in unusual shapes (API versions and GitHub Enterprise: test_api_versions.py)."""

from __future__ import annotations

import base64

import pytest

from bot.github.client import Installation
from bot.github.errors import ForgeError
from jobs.basics.errors import RetryClass
from tests.bot.github.client_kit import BRANCH, NAME, OWNER, REPO, Clock, forge_error
from tests.kit.github import FakeGitHub

# --- repository, files, issues, comments -----------------------------------------------------


@pytest.mark.parametrize(
    ("merge", "rebase", "squash_only"),
    [(True, True, False), (False, True, False), (True, False, False), (False, False, True)],
)
def test_repo_info_and_squash_only(gh: FakeGitHub, inst: Installation, merge: bool, rebase: bool,
                                   squash_only: bool) -> None:
    fake = gh.repos[REPO]
    fake.allow_merge_commit, fake.allow_rebase_merge = merge, rebase
    info = inst.repo(OWNER, NAME)
    assert (info.full_name, info.default_branch, info.clone_url, info.private) == (
        REPO, "main", fake.clone_url, False)
    assert info.squash_only is squash_only


def test_repo_info_of_a_private_repo_with_another_default_branch(gh: FakeGitHub,
                                                                 inst: Installation) -> None:
    gh.add_repo(OWNER, "secret", {"a": "b"}, default_branch="trunk", private=True)
    info = inst.repo(OWNER, "secret")
    assert (info.full_name, info.default_branch, info.private) == (f"{OWNER}/secret", "trunk", True)


def test_file_text_and_missing(gh: FakeGitHub, inst: Installation) -> None:
    assert inst.file(OWNER, NAME, ".github/stepwise.yml", "main") == "trigger_label: stepwise\n"
    gh.push_files(REPO, "other", {"src/a.py": "x = 2  # ünïcode\n"}, "edit")
    assert inst.file(OWNER, NAME, "src/a.py", "other") == "x = 2  # ünïcode\n"
    assert inst.file(OWNER, NAME, "src/a.py", "main") == "x = 1\n"
    assert inst.file(OWNER, NAME, "nope.yml", "main") is None
    assert inst.file(OWNER, NAME, "src", "main") is None  # a directory is not a file
    gh.fail("GET", r"/contents/", 500)
    assert forge_error(lambda: inst.file(OWNER, NAME, "src/a.py", "main")).retry_class is \
        RetryClass.AUTO_RETRY


def test_issue_and_pull_request_as_issue(gh: FakeGitHub, inst: Installation) -> None:
    number = gh.add_issue(REPO, "Tidy imports", "Please\n\ntidy", user="alice")
    info = inst.issue(OWNER, NAME, number)
    assert (info.number, info.title, info.body, info.author, info.state, info.is_pull_request) == (
        number, "Tidy imports", "Please\n\ntidy", "alice", "open", False)
    empty = gh.add_issue(REPO, "No body", None)
    assert inst.issue(OWNER, NAME, empty).body == ""
    gh.push_files(REPO, BRANCH, {"src/a.py": "x = 3\n"}, "batch")
    pull, _ = inst.create_pull(OWNER, NAME, title="t", head=BRANCH, base="main", body="card")
    assert inst.issue(OWNER, NAME, pull.number).is_pull_request is True
    gh.close_issue(REPO, number)
    assert inst.issue(OWNER, NAME, number).state == "closed"
    missing = forge_error(lambda: inst.issue(OWNER, NAME, 999))
    assert (missing.code, missing.retry_class) == ("github_404", RetryClass.DO_NOT_RETRY)


@pytest.mark.parametrize(("count", "pages"), [(150, 2), (100, 2), (3, 1), (0, 1)])
def test_comments_paginate(gh: FakeGitHub, inst: Installation, count: int, pages: int) -> None:
    number = gh.add_issue(REPO, "Long", "")
    for i in range(count):
        gh.add_comment(REPO, number, f"comment {i}", user="bob" if i % 2 else "stepwise[bot]",
                       user_type="User" if i % 2 else "Bot")
    found = inst.comments(OWNER, NAME, number)
    assert [c.body for c in found] == [f"comment {i}" for i in range(count)]
    assert [(c.author, c.is_bot) for c in found[:2]] == [("stepwise[bot]", True), ("bob", False)][:count]
    assert len({c.id for c in found}) == count and all(c.created_at for c in found)
    listed = gh.requests_to("GET", rf"/issues/{number}/comments$")
    assert [(r.query.get("page"), r.query.get("per_page")) for r in listed] == [
        (str(p), "100") for p in range(1, pages + 1)]


def test_create_and_update_comment(gh: FakeGitHub, inst: Installation) -> None:
    number = gh.add_issue(REPO, "t", "b")
    created = inst.create_comment(OWNER, NAME, number, "Plan\n\ndetails")
    assert (created.body, created.author, created.is_bot) == ("Plan\n\ndetails", "stepwise[bot]", True)
    assert inst.update_comment(OWNER, NAME, created.id, "Plan v2") is True
    assert [c.body for c in gh.comments_on(REPO, number)] == ["Plan v2"]
    assert inst.update_comment(OWNER, NAME, 987654, "gone") is False
    human = gh.add_comment(REPO, number, "mine", user="bob")
    refused = forge_error(lambda: inst.update_comment(OWNER, NAME, human.id, "edited by the bot"))
    assert (refused.code, refused.retry_class) == ("github_403", RetryClass.DO_NOT_RETRY)
    assert gh.effects == [f"{REPO}#{number}:comment-created:Plan",
                          f"{REPO}#{number}:comment-edited:{created.id}"]


def test_react_to_a_comment(gh: FakeGitHub, inst: Installation) -> None:
    number = gh.add_issue(REPO, "t", "b")
    human = gh.add_comment(REPO, number, "/stepwise approve", user="bob")
    inst.react(OWNER, NAME, human.id)
    inst.react(OWNER, NAME, human.id)  # GitHub answers 200 for the same reaction again
    inst.react(OWNER, NAME, human.id, "eyes")
    assert [(r.content, r.user) for r in human.reactions] == [("+1", "stepwise[bot]"),
                                                              ("eyes", "stepwise[bot]")]
    assert forge_error(lambda: inst.react(OWNER, NAME, 987654)).code == "github_404"


@pytest.mark.parametrize(("login", "role"), [("maya", "maintain"), ("tom", "triage"), ("ada", "admin"),
                                             ("wes", "write"), ("rita", "read"), ("helper[bot]", "write")])
def test_permission_is_the_real_role(gh: FakeGitHub, inst: Installation, login: str, role: str) -> None:
    gh.set_permission(REPO, login, role)
    assert inst.permission(OWNER, NAME, login) == role


def test_permission_is_none_on_404(gh: FakeGitHub, inst: Installation) -> None:
    gh.fail("GET", r"/collaborators/ghost/permission$", 404)
    assert inst.permission(OWNER, NAME, "ghost") == "none"
    gh.add_repo(OWNER, "secret", {"a": "b"}, private=True)
    assert inst.permission(OWNER, "secret", "stranger") == "none"
    gh.fail("GET", r"/permission$", 502)
    assert forge_error(lambda: inst.permission(OWNER, NAME, "x")).retry_class is RetryClass.AUTO_RETRY


# --- pull requests -----------------------------------------------------------------------------


def test_create_pull_opens_a_draft_and_returns_the_existing_one_again(gh: FakeGitHub,
                                                                      inst: Installation) -> None:
    gh.push_files(REPO, BRANCH, {"src/a.py": "x = 3\n"}, "batch 1")
    pull, is_draft = inst.create_pull(OWNER, NAME, title="stepwise: Tidy (#1)", head=BRANCH, base="main",
                                      body="card")
    fake = gh.repos[REPO].pulls[pull.number]
    assert is_draft is True and pull.draft is True and fake.draft is True
    assert (pull.node_id, fake.head_ref, fake.body) == (fake.node_id, BRANCH, "card")
    assert pull.html_url.endswith(f"/pull/{pull.number}")
    again, again_draft = inst.create_pull(OWNER, NAME, title="stepwise: Tidy (#1)", head=BRANCH,
                                          base="main", body="card")
    assert (again.number, again.node_id, again_draft) == (pull.number, pull.node_id, True)
    assert gh.effects == [f"{REPO}#{pull.number}:pr-opened:draft"]
    assert [r.json["draft"] for r in gh.requests_to("POST", r"/pulls$")] == [True, True]


def test_create_pull_falls_back_when_drafts_are_refused(gh: FakeGitHub, inst: Installation) -> None:
    gh.add_repo(OWNER, "secret", {"a.py": "1\n"}, private=True, drafts_supported=False)
    gh.push_files(f"{OWNER}/secret", BRANCH, {"a.py": "2\n"}, "batch 1")
    pull, is_draft = inst.create_pull(OWNER, "secret", title="t", head=BRANCH, base="main", body="card")
    assert is_draft is False and pull.draft is False
    assert gh.repos[f"{OWNER}/secret"].pulls[pull.number].draft is False
    assert [r.json["draft"] for r in gh.requests_to("POST", r"/pulls$")] == [True, False]
    assert gh.effects == [f"{OWNER}/secret#{pull.number}:pr-opened:ready"]


def test_create_pull_without_commits_is_a_forge_error(gh: FakeGitHub, inst: Installation) -> None:
    error = forge_error(lambda: inst.create_pull(OWNER, NAME, title="t", head="main", base="main",
                                                 body="b"))
    assert (error.code, error.retry_class) == ("github_422", RetryClass.DO_NOT_RETRY)
    assert gh.effects == []


def test_mark_ready_flips_the_draft(gh: FakeGitHub, inst: Installation) -> None:
    gh.push_files(REPO, BRANCH, {"src/a.py": "x = 3\n"}, "batch 1")
    pull, _ = inst.create_pull(OWNER, NAME, title="t", head=BRANCH, base="main", body="card")
    inst.mark_ready(pull.node_id)
    assert gh.repos[REPO].pulls[pull.number].draft is False
    assert gh.requests[-1].path == "/graphql" and gh.requests[-1].status == 200
    inst.mark_ready(pull.node_id)  # idempotent
    assert gh.effects[-1] == f"{REPO}#{pull.number}:pr-ready" and len(gh.effects) == 2
    assert isinstance(forge_error(lambda: inst.mark_ready("PR_unknown")), ForgeError)


def test_update_pull_body(gh: FakeGitHub, inst: Installation) -> None:
    gh.push_files(REPO, BRANCH, {"src/a.py": "x = 3\n"}, "batch 1")
    pull, _ = inst.create_pull(OWNER, NAME, title="t", head=BRANCH, base="main", body="card")
    inst.update_pull_body(OWNER, NAME, pull.number, "card v2")
    assert gh.repos[REPO].pulls[pull.number].body == "card v2"
    assert inst.find_pull(OWNER, NAME, BRANCH) == pull
    assert inst.find_pull(OWNER, NAME, "stepwise/issue-99") is None



@pytest.mark.parametrize(("base", "expected"), [("write", "write"), ("maintain", "maintain"),
                                                ("admin", "admin"), ("triage", "triage"), ("read", "read")])
def test_a_custom_role_counts_as_the_base_role_it_inherits(gh: FakeGitHub, inst: Installation, base: str,
                                                           expected: str) -> None:
    gh.add_custom_role("release-manager", base=base)
    gh.set_permission(REPO, "rel", "release-manager")
    assert inst.permission(OWNER, NAME, "rel") == expected


def test_team_membership_is_read_and_cached_briefly(gh: FakeGitHub, inst: Installation, clock: Clock) -> None:
    gh.add_team(OWNER, "release", ["tina"])
    assert inst.is_team_member(OWNER, "release", "tina") is True
    assert inst.is_team_member(OWNER, "release", "rita") is False
    assert inst.is_team_member(OWNER, "nonexistent", "tina") is False
    asked = len(gh.requests_to("GET", r"/teams/"))
    assert inst.is_team_member(OWNER, "release", "Tina") is True  # cached, logins case-insensitive
    assert len(gh.requests_to("GET", r"/teams/")) == asked
    gh.teams[(OWNER, "release")].discard("tina")
    clock.offset += 61
    assert inst.is_team_member(OWNER, "release", "tina") is False  # the cache expired


def test_without_members_read_a_team_lookup_is_githubs_403(gh: FakeGitHub, inst: Installation) -> None:
    gh.add_team(OWNER, "release", ["tina"])
    del gh.installations[1].permissions["members"]
    error = forge_error(lambda: inst.is_team_member(OWNER, "release", "tina"))
    assert error.evidence["status"] == 403 and error.code == "github_403"
    refused = gh.requests_to("GET", r"/teams/")[-1]
    assert refused.status == 403


def test_an_issue_whose_author_is_null_is_a_classified_error(gh: FakeGitHub, inst: Installation) -> None:
    number = gh.add_issue(REPO, "Tidy", "spec")
    gh.fail("GET", rf"/issues/{number}$", 200, body={"number": number, "title": "Tidy", "body": "spec",
                                                     "user": None, "state": "open"})
    error = forge_error(lambda: inst.issue(OWNER, NAME, number))
    assert error.code == "issue_without_author" and error.retry_class is RetryClass.NEEDS_HUMAN


@pytest.mark.parametrize("content", ["not base64 at all!", "YWJj*ZGVm", "YWJjZA="])
def test_file_content_that_is_not_base64_is_a_classified_error(gh: FakeGitHub, inst: Installation,
                                                               content: str) -> None:
    gh.fail("GET", r"/contents/", 200, body={"type": "file", "encoding": "base64", "content": content})
    error = forge_error(lambda: inst.file(OWNER, NAME, "src/a.py", "main"))
    assert error.code == "github_bad_content" and "src/a.py" in error.message


def test_wrapped_base64_lines_still_decode(gh: FakeGitHub, inst: Installation) -> None:
    text = "line\n" * 40
    wrapped = base64.encodebytes(text.encode()).decode()  # GitHub wraps at 60 characters
    assert "\n" in wrapped.strip()
    gh.fail("GET", r"/contents/", 200, body={"type": "file", "encoding": "base64", "content": wrapped})
    assert inst.file(OWNER, NAME, "src/a.py", "main") == text
