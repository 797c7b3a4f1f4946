"""The fake GitHub, driven by the real githubkit client over loopback HTTP."""

from __future__ import annotations

import base64
import contextlib
import os
import re
import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from githubkit import AppAuthStrategy, GitHub
from githubkit.cache import MemCacheStrategy
from githubkit.exception import GraphQLFailed, RequestError, RequestFailed, SecondaryRateLimitExceeded
from githubkit_schemas.latest.models import InstallationToken, Issue, PullRequest, PullRequestSimple

from tests.kit.github import FakeGitHub
from tests.kit.github_auth import generate_app_key

OWNER, NAME = "octo", "widgets"
READY = """
mutation($id: ID!) {
  markPullRequestReadyForReview(input: {pullRequestId: $id}) { pullRequest { id isDraft } }
}
"""
GIT_ENV = {"GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "T",
           "GIT_COMMITTER_EMAIL": "t@example.invalid", "GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0"}


@pytest.fixture(scope="module")
def app_key() -> tuple[str, str]:
    return generate_app_key()


@pytest.fixture
def gh(tmp_path: Path, app_key: tuple[str, str]) -> Iterator[FakeGitHub]:
    with FakeGitHub(root=tmp_path / "gh", public_key=app_key[1]) as fake:
        files = {"src/a.py": "x = 1\n", "README.md": "hi\n"}
        fake.add_repo(OWNER, NAME, files, config="trigger_label: stepwise\n")
        yield fake


def installation_client(gh: FakeGitHub, pem: str, installation_id: int = 1, **options: Any) -> GitHub[Any]:
    """Built the way the app builds it (no helper from the fake), without retries or proxies."""
    app = GitHub(AppAuthStrategy(gh.app_id, pem), base_url=gh.base_url, auto_retry=False, trust_env=False,
                 **options)
    return app.with_auth(app.auth.as_installation(installation_id))


@pytest.fixture
def client(gh: FakeGitHub, app_key: tuple[str, str]) -> GitHub[Any]:
    return installation_client(gh, app_key[0])


def run_git(cwd: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV}
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def push_branch(clone_url: str, work: Path, branch: str, files: dict[str, str]) -> str:
    if not work.exists():
        run_git(work.parent, "clone", "-q", clone_url, work.name)
    run_git(work, "checkout", "-q", "-B", branch)
    for rel, text in files.items():
        (work / rel).parent.mkdir(parents=True, exist_ok=True)
        (work / rel).write_text(text)
    run_git(work, "add", "-A")
    run_git(work, "commit", "-q", "-m", f"change on {branch}")
    run_git(work, "push", "-q", "origin", f"HEAD:refs/heads/{branch}")
    return run_git(work, "rev-parse", "HEAD")


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


def test_draft_pull_request_after_a_real_push(gh: FakeGitHub, client: GitHub[Any], tmp_path: Path) -> None:
    repo = gh.repos[f"{OWNER}/{NAME}"]
    issue = gh.add_issue(repo, "Tidy", "spec")
    branch = f"stepwise/issue-{issue}"
    sha = push_branch(repo.clone_url, tmp_path / "work", branch, {"src/a.py": "x = 3\n"})
    assert gh.branch_head(repo, branch) == sha and gh.git_log(repo, branch)[0] == f"change on {branch}"
    created = client.rest.pulls.create(OWNER, NAME, title="stepwise: Tidy (#1)", head=branch, base="main",
                                       body="card", draft=True)
    pr = created.parsed_data
    assert isinstance(pr, PullRequest) and (pr.number, pr.draft, pr.head.sha) == (2, True, sha)
    with pytest.raises(RequestFailed) as duplicate:
        client.rest.pulls.create(OWNER, NAME, title="again", head=f"{OWNER}:{branch}", base="main")
    assert duplicate.value.response.status_code == 422
    assert "A pull request already exists" in duplicate.value.response.text
    run_git(tmp_path / "work", "push", "-q", "origin", "origin/main:refs/heads/empty")
    with pytest.raises(RequestFailed) as no_commits:
        client.rest.pulls.create(OWNER, NAME, title="t", head="empty", base="main")
    assert "No commits between main and empty" in no_commits.value.response.text
    (listed,) = client.rest.pulls.list(OWNER, NAME, head=f"{OWNER}:{branch}", state="open").parsed_data
    assert isinstance(listed, PullRequestSimple) and listed.node_id == pr.node_id
    as_issue = client.rest.issues.get(OWNER, NAME, pr.number).parsed_data
    assert as_issue.pull_request is not None
    client.rest.pulls.update(OWNER, NAME, pr.number, body="card v2", draft=False)  # type: ignore[call-arg]
    assert "draft" not in gh.requests[-1].json  # githubkit drops unknown keyword arguments silently
    assert client.rest.pulls.get(OWNER, NAME, pr.number).parsed_data.draft is True
    result = client.graphql.request(READY, {"id": pr.node_id})
    assert result["markPullRequestReadyForReview"]["pullRequest"]["isDraft"] is False
    client.graphql.request(READY, {"id": pr.node_id})  # idempotent: no second effect
    assert client.rest.pulls.get(OWNER, NAME, pr.number).parsed_data.draft is False
    assert gh.effects == [f"{OWNER}/{NAME}#2:pr-opened:draft", f"{OWNER}/{NAME}#2:pr-body-updated",
                          f"{OWNER}/{NAME}#2:pr-ready"]
    assert gh.pull_for(repo, branch) is repo.pulls[2]


def test_drafts_unsupported_on_free_private_repos(gh: FakeGitHub, client: GitHub[Any]) -> None:
    repo = gh.add_repo(OWNER, "secret", {"a.py": "1\n"}, private=True, drafts_supported=False)
    gh.push_files(repo, "feature", {"a.py": "2\n"}, "change")
    with pytest.raises(RequestFailed) as refused:
        client.rest.pulls.create(OWNER, "secret", title="t", head="feature", base="main", draft=True)
    assert refused.value.response.status_code == 422
    assert "Draft pull requests are not supported" in refused.value.response.text
    normal = client.rest.pulls.create(OWNER, "secret", title="t", head="feature", base="main").parsed_data
    assert normal.draft is False
    with pytest.raises(GraphQLFailed):
        client.graphql.request(READY, {"id": "PR_unknown"})


def test_injected_errors(gh: FakeGitHub, client: GitHub[Any]) -> None:
    gh.fail("POST", r"/access_tokens$", 502)
    with pytest.raises(RequestError) as mint_failed:
        client.rest.repos.get(OWNER, NAME)
    cause = mint_failed.value.exc
    assert isinstance(cause, RequestFailed) and cause.response.status_code == 502
    gh.fail("GET", rf"^/repos/{OWNER}/{NAME}$", 502)
    with pytest.raises(RequestFailed) as failed:
        client.rest.repos.get(OWNER, NAME)
    assert failed.value.response.status_code == 502
    assert client.rest.repos.get(OWNER, NAME).status_code == 200
    gh.fail_secondary_rate_limit("POST", r"/comments$", retry_after=7)
    number = gh.add_issue(f"{OWNER}/{NAME}", "t", "b")
    with pytest.raises(SecondaryRateLimitExceeded) as limited:
        client.rest.issues.create_comment(OWNER, NAME, number, body="x")
    assert limited.value.retry_after == timedelta(seconds=7)
    assert gh.effects == []
    gh.fail_rate(0.5, statuses=(502, 503), seed=3)
    for _ in range(20):
        with contextlib.suppress(RequestFailed):
            client.rest.repos.get(OWNER, NAME)
    statuses = [r.status for r in gh.requests[-20:]]
    assert {200, 502, 503} >= set(statuses) and 3 < statuses.count(200) < 17


def test_enterprise_layout_and_git_over_http(fake_github_factory: Any, tmp_path: Path) -> None:
    gh: FakeGitHub = fake_github_factory(enterprise=True, git_http=True)
    repo = gh.add_repo(OWNER, NAME, {"a.py": "1\n"})
    assert gh.base_url.endswith("/api/v3/") and repo.clone_url == f"{gh.web_url}/{OWNER}/{NAME}.git"
    client = gh.client()
    rest = client.rest("2022-11-28")  # the only version GHES (and the fake in GHES mode) serves
    assert rest.repos.get(OWNER, NAME).parsed_data.clone_url == repo.clone_url
    with pytest.raises(RequestFailed) as refused_version:  # githubkit's default, 2026-03-10
        client.rest.repos.get(OWNER, NAME)
    assert refused_version.value.response.status_code == 400
    assert "'2026-03-10' is not supported" in refused_version.value.response.json()["message"]
    token = gh.issue_token(1).token
    authed = repo.clone_url.replace("http://", f"http://x-access-token:{token}@")
    sha = push_branch(authed, tmp_path / "work", "feature", {"a.py": "2\n"})
    assert gh.effects == [f"{OWNER}/{NAME}:pushed:feature:{sha[:7]}"]
    pr = rest.pulls.create(OWNER, NAME, title="t", head="feature", base="main", draft=True).parsed_data
    client.graphql.request(READY, {"id": pr.node_id})
    assert gh.requests[-1].path == "/graphql" and gh.repos[f"{OWNER}/{NAME}"].pulls[pr.number].draft is False
    refused = subprocess.run(["git", "ls-remote", repo.clone_url], env={**os.environ, **GIT_ENV},
                             capture_output=True, check=False)
    assert refused.returncode != 0


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


def test_helpers_merge_and_close(gh: FakeGitHub, client: GitHub[Any]) -> None:
    repo = gh.repos[f"{OWNER}/{NAME}"]
    gh.push_files(repo, "feature", {"b.py": "2\n"}, "add b")
    pr = client.rest.pulls.create(OWNER, NAME, title="t", head="feature", base="main").parsed_data
    merge_sha = gh.merge_pull(repo, pr.number)
    merged = client.rest.pulls.get(OWNER, NAME, pr.number)
    assert merged.parsed_data.merged and gh.branch_head(repo, "main") == merge_sha
    assert merged.json()["merge_commit_sha"] == merge_sha  # not in githubkit's 2026-03-10 PullRequest model
    assert gh.read_file(repo, "b.py") == "2\n"
    assert client.rest.pulls.list(OWNER, NAME).parsed_data == []
    assert len(client.rest.pulls.list(OWNER, NAME, state="closed").parsed_data) == 1


# --- as strict as GitHub: App permissions, API versions, custom roles, teams ---------------------


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


def test_the_readme_install_steps_name_every_permission_app_yml_grants() -> None:
    from tests.kit.github_permissions import APP_MANIFEST, granted_permissions

    readme = (APP_MANIFEST.parent / "README.md").read_text()
    install = readme[readme.index("### Install the app"):]
    install = " ".join(install[:install.index("2. **Run Redis")].split())
    for name, level in granted_permissions().items():
        assert f"{name.replace('_', ' ')} {level}" in install, (name, level)
