"""The REST API version every call sends, and GitHub Enterprise Server (a base URL under
/api/v3, only 2022-11-28 served), against the loopback fake."""

from __future__ import annotations

from pathlib import Path

from bot.github.app import GitHubApp
from bot.github.client import Installation
from jobs.basics.errors import RetryClass
from tests.bot.github.client_kit import BRANCH, NAME, OWNER, REPO, forge_error, start_fake
from tests.kit.github import FakeGitHub

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
