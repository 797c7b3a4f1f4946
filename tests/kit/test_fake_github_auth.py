"""The fake GitHub's App authentication (tests/kit/github_auth.py), driven by the real githubkit
client over loopback HTTP: installation tokens minted once and used, the access-token response,
refused credentials, and githubkit's process-wide token cache."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from githubkit import AppAuthStrategy, GitHub
from githubkit.cache import MemCacheStrategy
from githubkit.exception import RequestError, RequestFailed
from githubkit_schemas.latest.models import InstallationToken

from tests.kit.fake_github_kit import NAME, OWNER, installation_client
from tests.kit.github import FakeGitHub
from tests.kit.github_auth import generate_app_key


def test_installation_token_is_minted_once_and_used(gh: FakeGitHub, client: GitHub[Any]) -> None:
    repo = client.rest.repos.get(OWNER, NAME).parsed_data
    assert (repo.full_name, repo.default_branch, repo.clone_url) == (f"{OWNER}/{NAME}", "main",
                                                                     gh.repos[f"{OWNER}/{NAME}"].clone_url)
    client.rest.issues.get(OWNER, NAME, gh.add_issue(f"{OWNER}/{NAME}", "t", "b"))
    mint, *calls = gh.requests
    assert (mint.method, mint.path, mint.status) == ("POST", "/app/installations/1/access_tokens", 201)
    scheme, jwt_text = mint.headers["authorization"].split()
    assert scheme == "Bearer" and jwt_text.count(".") == 2
    (token,) = gh.tokens
    assert [c.headers["authorization"] for c in calls] == [f"token {token}"] * 2


def test_access_token_response_shape(gh: FakeGitHub, app_key: tuple[str, str]) -> None:
    app = GitHub(AppAuthStrategy(gh.app_id, app_key[0]), base_url=gh.base_url, auto_retry=False,
                 trust_env=False)
    minted = app.rest.apps.create_installation_access_token(1)
    assert minted.status_code == 201
    token = minted.parsed_data
    assert isinstance(token, InstallationToken) and token.token.startswith("ghs_")
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", token.expires_at)
    expires = datetime.strptime(token.expires_at, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    assert timedelta(minutes=59) < expires - datetime.now(UTC) <= timedelta(hours=1)
    assert app.rest.apps.get_repo_installation(OWNER, NAME).parsed_data.id == 1


def test_bad_credentials_are_refused(gh: FakeGitHub, tmp_path: Path) -> None:
    other_pem, _ = generate_app_key()
    wrong_key = installation_client(gh, other_pem)  # keep a reference: .rest holds the client weakly
    with pytest.raises(RequestError) as bad_jwt:  # a failed token mint is wrapped, not a RequestFailed
        wrong_key.rest.repos.get(OWNER, NAME)
    assert not isinstance(bad_jwt.value, RequestFailed)
    assert isinstance(bad_jwt.value.exc, RequestFailed) and bad_jwt.value.exc.response.status_code == 401
    url = f"repos/{OWNER}/{NAME}"
    with httpx.Client(base_url=gh.base_url, trust_env=False) as raw:
        assert raw.get(url).status_code == 401
        token = gh.issue_token(1).token
        assert raw.get(url, headers={"Authorization": f"Bearer {token}"}).status_code == 200
        gh.expire_tokens()
        assert raw.get(url, headers={"Authorization": f"token {token}"}).status_code == 401
        gh.add_repo("elsewhere", "thing", {"a": "b"}, installation_id=2)
        foreign = gh.issue_token(2).token  # valid, but its installation lacks the repo: 404 like GitHub
        assert raw.get(url, headers={"Authorization": f"token {foreign}"}).status_code == 404


def test_githubkit_token_cache_is_process_wide(tmp_path: Path, app_key: tuple[str, str]) -> None:
    """Why each FakeGitHub gets its own app id: githubkit caches tokens by app id + installation only."""
    for run in range(2):
        with FakeGitHub(root=tmp_path / str(run), app_id=77, public_key=app_key[1]) as gh:
            gh.add_repo(OWNER, NAME, {"a": "b"})
            client = installation_client(gh, app_key[0])
            if run == 0:
                client.rest.repos.get(OWNER, NAME)
                continue
            with pytest.raises(RequestFailed) as stale:  # the token minted by the first fake is reused
                client.rest.repos.get(OWNER, NAME)
            assert stale.value.response.status_code == 401
            fresh = installation_client(gh, app_key[0], cache_strategy=MemCacheStrategy())
            assert fresh.rest.repos.get(OWNER, NAME).status_code == 200
