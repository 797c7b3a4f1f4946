"""The App (bot/github/app.py) against the loopback fake: installation tokens minted, cached and
replaced, the credentials git is given, never revealed in an error, and one TLS context shared by
its clients (without it httpx loaded the CA bundle again for each call)."""

from __future__ import annotations

import base64
import ssl
import time
import traceback
from collections.abc import Callable

import httpx
import pytest

from bot.github.app import GitHubApp, shared_tls_context
from bot.github.client import TOKEN_MARGIN_S, Installation
from tests.bot.github.client_kit import BRANCH, NAME, OWNER, REPO, Clock, forge_error, mints, used_tokens
from tests.kit.github import FakeGitHub

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


# --- one TLS context -------------------------------------------------------------------------


def test_calls_through_the_app_build_no_tls_context_after_the_first(
        monkeypatch: pytest.MonkeyPatch, tmp_path: object) -> None:
    built: list[object] = []
    original = httpx.create_ssl_context

    def counting(*args: object, **kwargs: object) -> ssl.SSLContext:
        built.append(kwargs.get("verify", args[0] if args else True))
        return original(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr("httpx._transports.default.create_ssl_context", counting)
    shared_tls_context()  # the process's one context, built before the calls
    with FakeGitHub() as gh:
        repo = gh.add_repo("octo", "widgets", {"README.md": "# w\n"})
        gh.add_issue(repo, "Title", "body", user="maria")
        app = GitHubApp(app_id=gh.app_id, private_key=gh.private_key_pem, base_url=gh.base_url)
        installation = app.installation_id("octo", "widgets")
        client = app.client(installation)
        for _ in range(3):
            assert client.repo("octo", "widgets").default_branch
            assert isinstance(client.comments("octo", "widgets", 1), list)
    # httpx is handed the shared context: it never builds one from the CA bundle itself
    assert built and all(isinstance(verify, ssl.SSLContext) for verify in built)
    assert all(verify is shared_tls_context() for verify in built)


def test_the_shared_context_verifies_like_httpx_default() -> None:
    context = shared_tls_context()
    assert context is shared_tls_context()
    assert context.verify_mode is ssl.CERT_REQUIRED and context.check_hostname
    assert context.cert_store_stats()["x509_ca"] > 0  # a CA bundle is loaded
