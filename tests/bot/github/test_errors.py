"""How failed GitHub calls are classified (bot/github/errors.py): status codes, a repository
that is gone, rate limits, failed token mints, an unreachable GitHub and a connection it
dropped."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from bot.github.app import GitHubApp
from bot.github.client import Installation
from jobs.basics.errors import RetryClass
from tests.bot.github.client_kit import BRANCH, NAME, OWNER, REPO, forge_error
from tests.kit.github import FakeGitHub
from tests.kit.github_injection import HANG_UP
from tests.kit.redis_server import free_port

# --- errors ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("status", "code", "retry"), [
    (502, "github_transient", RetryClass.AUTO_RETRY),
    (503, "github_transient", RetryClass.AUTO_RETRY),
    (403, "github_403", RetryClass.DO_NOT_RETRY),
    (404, "github_404", RetryClass.DO_NOT_RETRY),
    (410, "github_410", RetryClass.DO_NOT_RETRY),
    (400, "github_400", RetryClass.NEEDS_HUMAN),
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
    assert error.message.startswith("could not reach GitHub: ConnectError (") and \
        "refused" in error.message, error.message


def test_a_connection_dropped_before_the_answer_is_transient_and_says_so(
        gh: FakeGitHub, inst: Installation) -> None:
    """GitHub's front end may drop a connection before answering: the call is retried later
    like an unreachable GitHub, and the message says the answer was lost and why."""
    gh.fail("GET", rf"^/repos/{OWNER}/{NAME}$", HANG_UP)
    error = forge_error(lambda: inst.repo(OWNER, NAME))
    assert (error.code, error.retry_class) == ("github_unreachable", RetryClass.AUTO_RETRY)
    assert error.message == ("GitHub's answer was lost with its connection: RemoteProtocolError "
                             "(Server disconnected without sending a response.)")
