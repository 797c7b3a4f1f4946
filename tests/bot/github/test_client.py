"""The GitHub adapter (bot/github/client.py) driving the real githubkit client against the loopback fake."""

from __future__ import annotations

import base64
import time
import traceback
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from bot.github.app import GitHubApp
from bot.github.client import TOKEN_MARGIN_S, Installation
from bot.github.errors import ForgeError
from jobs.domain.errors import RetryClass
from tests.kit.github import FakeGitHub
from tests.kit.redis_server import free_port

OWNER, NAME = "octo", "widgets"
REPO = f"{OWNER}/{NAME}"
BRANCH = "stepwise/issue-1"


class Clock:
    """Real time plus an offset the test moves; the fake GitHub and the adapter share it."""

    def __init__(self) -> None:
        self.offset = 0.0

    def __call__(self) -> float:
        return time.time() + self.offset

    def utc(self) -> datetime:
        return datetime.fromtimestamp(self(), UTC).replace(microsecond=0)


def start_fake(root: Path, **options: Any) -> FakeGitHub:
    gh = FakeGitHub(root=root, **options).start()
    gh.add_repo(OWNER, NAME, {"src/a.py": "x = 1\n", "README.md": "hi\n"},
                config="trigger_label: stepwise\n")
    return gh


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def gh(tmp_path: Path, clock: Clock) -> Iterator[FakeGitHub]:
    fake = start_fake(tmp_path / "gh", clock=clock.utc)
    yield fake
    fake.stop()


@pytest.fixture
def app(gh: FakeGitHub, clock: Clock) -> GitHubApp:
    return GitHubApp(app_id=gh.app_id, private_key=gh.private_key_pem, base_url=gh.base_url, timeout=10,
                     clock=clock)


@pytest.fixture
def inst(app: GitHubApp) -> Installation:
    return app.client(1)


def mints(gh: FakeGitHub) -> int:
    return len(gh.requests_to("POST", r"^/app/installations/1/access_tokens$"))


def used_tokens(gh: FakeGitHub) -> list[str]:
    return [r.headers["authorization"].split()[-1] for r in gh.requests if r.path.startswith("/repos/")]


def forge_error(call: Callable[[], object]) -> ForgeError:
    with pytest.raises(ForgeError) as caught:
        call()
    return caught.value


# --- tokens ----------------------------------------------------------------------------------


def test_token_is_minted_once_and_reused_until_the_margin(gh: FakeGitHub, inst: Installation,
                                                          clock: Clock) -> None:
    for _ in range(3):
        inst.repo(OWNER, NAME)
    inst.issue(OWNER, NAME, gh.add_issue(REPO, "t", "b"))
    assert mints(gh) == 1
    (first,) = gh.tokens
    expires = gh.tokens[first].expires_at.timestamp()
    clock.offset = expires - TOKEN_MARGIN_S - 5 - time.time()  # just outside the margin
    inst.repo(OWNER, NAME)
    assert mints(gh) == 1
    clock.offset = expires - TOKEN_MARGIN_S + 5 - time.time()  # inside it: mint a new one
    inst.repo(OWNER, NAME)
    assert mints(gh) == 2
    second = next(t for t in gh.tokens if t != first)
    assert used_tokens(gh) == [first] * 5 + [second]
    inst.repo(OWNER, NAME)
    assert mints(gh) == 2 and used_tokens(gh)[-1] == second


def test_after_expiry_a_new_token_is_minted(gh: FakeGitHub, inst: Installation, clock: Clock) -> None:
    inst.repo(OWNER, NAME)
    (old,) = gh.tokens
    clock.offset = gh.tokens[old].expires_at.timestamp() + 1 - time.time()  # the hour is over
    assert gh.tokens[old].expires_at <= gh.clock()  # GitHub refuses the old token now
    assert inst.repo(OWNER, NAME).full_name == REPO
    assert mints(gh) == 2
    assert used_tokens(gh)[-1] != old and used_tokens(gh)[-1] in gh.tokens


def test_tokens_are_cached_per_installation(gh: FakeGitHub, app: GitHubApp) -> None:
    gh.add_repo("elsewhere", "thing", {"a": "b"}, installation_id=2)
    one, two = app.token(1), app.token(2)
    assert one != two and app.token(1) == one and app.token(2) == two
    assert {gh.tokens[one].installation_id, gh.tokens[two].installation_id} == {1, 2}
    assert len(gh.requests_to("POST", r"/access_tokens$")) == 2


def test_a_token_github_rejects_is_replaced(gh: FakeGitHub, inst: Installation) -> None:
    inst.repo(OWNER, NAME)
    gh.expire_tokens()  # GitHub no longer accepts it although its expiry time is not reached locally
    assert inst.repo(OWNER, NAME).full_name == REPO
    assert mints(gh) == 2


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
    assert (missing.code, missing.retry_class) == ("github_404", RetryClass.NEEDS_HUMAN)


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
    assert (refused.code, refused.retry_class) == ("github_403", RetryClass.NEEDS_HUMAN)
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
    assert (error.code, error.retry_class) == ("github_422", RetryClass.NEEDS_HUMAN)
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


# --- errors ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("status", "code", "retry"), [
    (502, "github_transient", RetryClass.AUTO_RETRY),
    (503, "github_transient", RetryClass.AUTO_RETRY),
    (403, "github_403", RetryClass.NEEDS_HUMAN),
    (404, "github_404", RetryClass.NEEDS_HUMAN),
])
def test_status_codes_become_forge_errors(gh: FakeGitHub, inst: Installation, status: int, code: str,
                                          retry: RetryClass) -> None:
    number = gh.add_issue(REPO, "t", "b")
    inst.repo(OWNER, NAME)  # the token is cached: the failure hits the call itself
    gh.fail("GET", rf"^/repos/{OWNER}/{NAME}/issues/{number}$", status,
            body={"message": "Resource not accessible by integration"} if status == 403 else None)
    error = forge_error(lambda: inst.issue(OWNER, NAME, number))
    assert (error.code, error.retry_class, error.evidence) == (code, retry, {"status": status})
    assert str(status) in error.message and error.hint
    assert inst.issue(OWNER, NAME, number).number == number  # the failure was injected once


def test_a_repository_that_is_gone_is_not_retried(gh: FakeGitHub, inst: Installation) -> None:
    inst.repo(OWNER, NAME)
    gh.fail("GET", rf"^/repos/{OWNER}/{NAME}$", 404)
    error = forge_error(lambda: inst.repo(OWNER, NAME))
    assert (error.code, error.retry_class) == ("repository_gone", RetryClass.DO_NOT_RETRY)
    assert error.hint
    gh.fail("GET", rf"^/repos/{OWNER}/{NAME}$", 502)
    assert forge_error(lambda: inst.repo(OWNER, NAME)).retry_class is RetryClass.AUTO_RETRY


def test_secondary_rate_limit_is_transient(gh: FakeGitHub, inst: Installation) -> None:
    number = gh.add_issue(REPO, "t", "b")
    inst.repo(OWNER, NAME)
    gh.fail_secondary_rate_limit("POST", r"/comments$", retry_after=7)
    error = forge_error(lambda: inst.create_comment(OWNER, NAME, number, "x"))
    assert error.retry_class is RetryClass.AUTO_RETRY
    assert gh.comments_on(REPO, number) == []


@pytest.mark.parametrize(("status", "code", "retry"), [
    (502, "github_transient", RetryClass.AUTO_RETRY),
    (404, "installation_removed", RetryClass.DO_NOT_RETRY),
    (403, "installation_removed", RetryClass.DO_NOT_RETRY),
])
def test_a_failed_token_mint_from_the_app(gh: FakeGitHub, app: GitHubApp, status: int, code: str,
                                          retry: RetryClass) -> None:
    gh.fail("POST", r"/access_tokens$", status)
    error = forge_error(lambda: app.token(1))
    assert (error.code, error.retry_class) == (code, retry)
    assert app.token(1) in gh.tokens  # nothing bad was cached


@pytest.mark.parametrize(("status", "code", "retry"), [
    (502, "github_transient", RetryClass.AUTO_RETRY),
    (404, "installation_removed", RetryClass.DO_NOT_RETRY),
])
@pytest.mark.parametrize("call", ["repo", "file", "permission", "create_pull"])
def test_a_failed_token_mint_inside_a_call_keeps_its_class(gh: FakeGitHub, inst: Installation, call: str,
                                                           status: int, code: str,
                                                           retry: RetryClass) -> None:
    number = gh.add_issue(REPO, "t", "b")
    gh.push_files(REPO, BRANCH, {"src/a.py": "x = 3\n"}, "batch 1")
    calls: dict[str, Callable[[], object]] = {
        "repo": lambda: inst.repo(OWNER, NAME),
        "file": lambda: inst.file(OWNER, NAME, "README.md", "main"),
        "permission": lambda: inst.permission(OWNER, NAME, "bob"),
        "create_comment": lambda: inst.create_comment(OWNER, NAME, number, "x"),
        "create_pull": lambda: inst.create_pull(OWNER, NAME, title="t", head=BRANCH, base="main",
                                                body="b"),
    }
    gh.fail("POST", r"/access_tokens$", status)
    error = forge_error(calls[call])
    assert (error.code, error.retry_class) == (code, retry)


def test_unreachable_github_is_transient(gh: FakeGitHub) -> None:
    app = GitHubApp(app_id=gh.app_id, private_key=gh.private_key_pem,
                    base_url=f"http://127.0.0.1:{free_port()}/", timeout=2)
    error = forge_error(lambda: app.token(1))
    assert (error.code, error.retry_class) == ("github_unreachable", RetryClass.AUTO_RETRY)


# --- GitHub Enterprise -----------------------------------------------------------------------------


def test_enterprise_server_every_call(tmp_path: Path) -> None:
    gh = start_fake(tmp_path / "ghes", enterprise=True)
    try:
        assert gh.base_url.endswith("/api/v3/")
        inst = GitHubApp(app_id=gh.app_id, private_key=gh.private_key_pem, base_url=gh.base_url,
                         timeout=10).client(1)
        gh.set_permission(REPO, "maya", "maintain")
        number = gh.add_issue(REPO, "Tidy", "spec", user="alice")
        human = gh.add_comment(REPO, number, "/stepwise approve", user="maya")
        assert inst.repo(OWNER, NAME).full_name == REPO
        assert inst.file(OWNER, NAME, ".github/stepwise.yml", "main") == "trigger_label: stepwise\n"
        assert inst.file(OWNER, NAME, "missing", "main") is None
        assert inst.issue(OWNER, NAME, number).author == "alice"
        comment = inst.create_comment(OWNER, NAME, number, "Plan")
        assert inst.update_comment(OWNER, NAME, comment.id, "Plan v2") is True
        assert [c.body for c in inst.comments(OWNER, NAME, number)] == ["/stepwise approve", "Plan v2"]
        inst.react(OWNER, NAME, human.id)
        assert inst.permission(OWNER, NAME, "maya") == "maintain"
        gh.push_files(REPO, BRANCH, {"src/a.py": "x = 3\n"}, "batch 1")
        pull, is_draft = inst.create_pull(OWNER, NAME, title="t", head=BRANCH, base="main", body="c")
        assert is_draft and inst.find_pull(OWNER, NAME, BRANCH) == pull
        inst.update_pull_body(OWNER, NAME, pull.number, "c2")
        inst.mark_ready(pull.node_id)  # answered only at /api/graphql in this mode
        assert gh.repos[REPO].pulls[pull.number].draft is False
        assert all(not r.path.startswith("/-") and r.status < 400 for r in gh.requests
                   if not r.path.endswith("/missing")), [(r.path, r.status) for r in gh.requests]
        assert any(r.path == "/graphql" for r in gh.requests)
    finally:
        gh.stop()


# --- credentials for git, and secrecy ------------------------------------------------------------


def test_git_auth_args_carry_a_fresh_installation_token(gh: FakeGitHub, inst: Installation) -> None:
    args = inst.git_auth_args()
    assert len(args) == 2 and args[0] == "-c"
    prefix = "http.extraHeader=Authorization: Basic "
    assert args[1].startswith(prefix)
    user, _, token = base64.b64decode(args[1][len(prefix):]).decode().partition(":")
    assert user == "x-access-token" and token in gh.tokens
    assert gh.tokens[token].installation_id == 1


def test_no_forge_error_reveals_the_token(gh: FakeGitHub, inst: Installation) -> None:
    number = gh.add_issue(REPO, "t", "b")
    secrets = [inst.app.token(1), inst.git_auth_args()[1].rsplit(" ", 1)[-1]]
    failures: list[Callable[[], object]] = []
    for status in (401, 403, 404, 422, 500, 502):
        for method, path, call in [
            ("GET", rf"^/repos/{OWNER}/{NAME}$", lambda: inst.repo(OWNER, NAME)),
            ("GET", r"/contents/", lambda: inst.file(OWNER, NAME, "README.md", "main")),
            ("POST", r"/comments$", lambda: inst.create_comment(OWNER, NAME, number, "x")),
            ("GET", r"/comments$", lambda: inst.comments(OWNER, NAME, number)),
            ("POST", r"/pulls$", lambda: inst.create_pull(OWNER, NAME, title="t", head=BRANCH,
                                                           base="main", body="b")),
            ("POST", r"^/graphql$", lambda: inst.mark_ready("PR_x")),
        ]:
            if status == 404 and path.startswith("/contents"):
                continue  # a missing file is None, not an error
            # A 401 is retried once with a fresh token, so it must persist to become an error.
            gh.fail(method, path, status, times=2 if status == 401 else 1)
            failures.append(call)
    failures.append(lambda: inst.mark_ready("PR_unknown"))  # a GraphQL error, not an HTTP one
    errors = [forge_error(call) for call in failures]
    assert len(errors) == len(failures)
    for error in errors:
        text = "\n".join([str(error), repr(error), error.message, error.hint, str(error.evidence),
                          error.info().model_dump_json(), *traceback.format_exception(error)])
        for secret in secrets:
            assert secret not in text, text


# --- API version, custom roles, teams, robustness of reads (issue 15) -----------------------------


def test_every_rest_call_sends_the_configured_api_version(gh: FakeGitHub, inst: Installation) -> None:
    gh.set_permission(REPO, "maya", "maintain")
    number = gh.add_issue(REPO, "Tidy", "spec")
    inst.repo(OWNER, NAME)
    inst.issue(OWNER, NAME, number)
    inst.create_comment(OWNER, NAME, number, "Plan")
    inst.permission(OWNER, NAME, "maya")
    inst.is_team_member(OWNER, "release", "maya")
    rest = [r for r in gh.requests if r.path != "/graphql"]
    assert any(r.path.endswith("/access_tokens") for r in rest)  # the token mint too
    assert {r.headers.get("x-github-api-version") for r in rest} == {"2022-11-28"}


def test_a_version_the_server_does_not_serve_is_a_classified_400(tmp_path: Path) -> None:
    ghes = start_fake(tmp_path / "ghes", enterprise=True)
    try:
        newest = GitHubApp(app_id=ghes.app_id, private_key=ghes.private_key_pem, base_url=ghes.base_url,
                           timeout=10, api_version="2026-03-10")
        error = forge_error(lambda: newest.client(1).repo(OWNER, NAME))
        assert error.evidence["status"] == 400 and error.retry_class is RetryClass.NEEDS_HUMAN
        served = GitHubApp(app_id=ghes.app_id, private_key=ghes.private_key_pem, base_url=ghes.base_url,
                           timeout=10)  # the default, 2022-11-28
        assert served.client(1).repo(OWNER, NAME).full_name == REPO
    finally:
        ghes.stop()


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
