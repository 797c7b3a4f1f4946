"""What the base branch requires, read where GitHub reports it to an App (bot/github/ci.py):
branch protection's required status checks (`administration: read`; 403 without it, 404 on an
unprotected branch) and the rulesets of the branch (`required_status_checks` with
`strict_required_status_checks_policy`, `required_signatures`), merged; never `GET /branches`,
which does not show `strict` to every token (the fake hides it as GitHub does)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.github.app import GitHubApp
from bot.github.ci import RepositoryCi, Required
from bot.github.client import Installation
from bot.github.git_data import requires_signed_commits
from tests.kit.github import FakeGitHub
from tests.kit.github_ci import CiPlayer

OWNER, NAME = "octo", "widgets"
REPO = f"{OWNER}/{NAME}"


@pytest.fixture
def gh(tmp_path: Path) -> Iterator[FakeGitHub]:
    with FakeGitHub(root=tmp_path / "gh") as fake:
        fake.add_repo(OWNER, NAME, {"calc/a.py": "x = 1\n"})
        yield fake


def client_of(gh: FakeGitHub) -> Installation:
    return GitHubApp(app_id=gh.app_id, private_key=gh.private_key_pem, base_url=gh.base_url,
                     timeout=10).client(1)


def test_protection_s_strict_and_checks_come_from_the_protection_endpoint(gh: FakeGitHub) -> None:
    CiPlayer(gh, gh.repos[REPO]).protect("main", ["tests", "lint"], strict=True)
    assert RepositoryCi(client_of(gh), REPO).required("main") == Required(("tests", "lint"), True)
    assert gh.requests_to("GET", r"/protection/required_status_checks$")[-1].status == 200
    assert not gh.requests_to("GET", r"/repos/octo/widgets/branches/main$")  # not where GitHub hides `strict`


def test_without_administration_read_the_rulesets_still_count_and_403_is_no_error(
        gh: FakeGitHub) -> None:
    del gh.installations[1].permissions["administration"]  # not accepted by the owner yet
    ci = CiPlayer(gh, gh.repos[REPO])
    ci.protect("main", ["tests"], strict=True)
    ci.ruleset("main", ["lint"], strict=True)
    assert RepositoryCi(client_of(gh), REPO).required("main") == Required(("lint",), True)
    assert gh.requests_to("GET", r"/protection/required_status_checks$")[-1].status == 403


def test_both_sources_are_merged_and_either_may_make_branches_strict(gh: FakeGitHub) -> None:
    ci = CiPlayer(gh, gh.repos[REPO])
    ci.protect("main", ["tests", "lint"], strict=False)
    ci.ruleset("main", ["lint", "types"], strict=True)
    ci.ruleset("release", ["docs"], strict=False)  # another branch's ruleset: not ours
    client = client_of(gh)
    assert RepositoryCi(client, REPO).required("main") == Required(("tests", "lint", "types"), True)
    ci.ruleset("main", [], strict=False).enforcement = "evaluate"  # not enforced: adds nothing
    gh.repos[REPO].ci.rulesets[0].strict = False
    assert RepositoryCi(client, REPO).required("main") == Required(("tests", "lint", "types"),
                                                                   False)
    gh.repos[REPO].ci.protection["main"].strict = True
    assert RepositoryCi(client, REPO).required("main").strict


def test_no_protection_and_no_rulesets_there_require_nothing(gh: FakeGitHub) -> None:
    gh.fail("GET", r"/rules/branches/", 404, times=1)  # GHES without rulesets
    assert RepositoryCi(client_of(gh), REPO).required("main") == Required((), False)
    assert RepositoryCi(client_of(gh), REPO).required("gone") == Required((), False)


def test_polled_requirements_are_conditional_reads(gh: FakeGitHub) -> None:
    ci = CiPlayer(gh, gh.repos[REPO])
    ci.protect("main", ["tests"])
    ci.ruleset("main", ["lint"])
    repository = RepositoryCi(client_of(gh), REPO)
    repository.required("main")
    assert repository.required("main") == Required(("tests", "lint"), False)
    assert [r.status for r in gh.requests[-2:]] == [304, 304]
    ci.ruleset("main", ["types"], strict=True)  # a change is seen at once
    assert repository.required("main") == Required(("tests", "lint", "types"), True)


def test_required_signatures_come_from_rulesets_or_protection(gh: FakeGitHub) -> None:
    client = client_of(gh)
    assert not requires_signed_commits(client, REPO, "main")
    gh.repos[REPO].ci.signed_branches.add("main")  # branch protection's setting
    assert requires_signed_commits(client, REPO, "main")
    del gh.installations[1].permissions["administration"]
    gh.repos[REPO].ci.signed_branches.clear()
    ruleset = CiPlayer(gh, gh.repos[REPO]).ruleset("main", [])
    ruleset.required_signatures = True
    assert requires_signed_commits(client_of(gh), REPO, "main")
