"""The App's GitHub clients share one TLS context: githubkit opens an httpx client per call,
and without one to share httpx loaded the CA bundle again each time (bot/github/tls.py).
Real githubkit calls against the loopback fake GitHub."""

from __future__ import annotations

import ssl

import httpx
import pytest

from bot.github import tls
from bot.github.app import GitHubApp
from tests.kit.github import FakeGitHub


def test_calls_through_the_app_build_no_tls_context_after_the_first(
        monkeypatch: pytest.MonkeyPatch, tmp_path: object) -> None:
    built: list[object] = []
    original = httpx.create_ssl_context

    def counting(*args: object, **kwargs: object) -> ssl.SSLContext:
        built.append(kwargs.get("verify", args[0] if args else True))
        return original(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr("httpx._transports.default.create_ssl_context", counting)
    tls.shared_tls_context()  # the process's one context, built before the calls
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
    assert all(verify is tls.shared_tls_context() for verify in built)


def test_the_shared_context_verifies_like_httpx_default() -> None:
    context = tls.shared_tls_context()
    assert context is tls.shared_tls_context()
    assert context.verify_mode is ssl.CERT_REQUIRED and context.check_hostname
    assert context.cert_store_stats()["x509_ca"] > 0  # a CA bundle is loaded
