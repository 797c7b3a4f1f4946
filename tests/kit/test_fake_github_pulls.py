"""The fake GitHub's pull requests and git, driven by the real githubkit client and the real git
client over loopback HTTP: a draft pull request after a real push, drafts refused on free private
repositories, the merge and close helpers, and the enterprise layout with git over HTTP."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from githubkit import GitHub
from githubkit.exception import GraphQLFailed, RequestFailed
from githubkit_schemas.latest.models import PullRequest, PullRequestSimple

from tests.kit.fake_github_kit import GIT_ENV, NAME, OWNER, READY, push_branch, run_git
from tests.kit.github import FakeGitHub


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
