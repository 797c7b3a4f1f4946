"""The fake GitHub's Git Data API and the rules around it, driven by githubkit and git over
HTTP: commits made through the API without a custom author, committer or signature are signed
(verified, a sha of their own, the App's bot user their author) and pushed ones, or ones made
with a custom author, committer or signature, are not; refs move by fast-forward only; an App
without `workflows: write` may neither push nor move a ref to a workflow change (a merge of the
base's change included); a base that requires signed commits refuses to merge a pull request
holding an unsigned one (405) and shows it `blocked` once GitHub has computed its mergeability
(null before)."""

from __future__ import annotations

import base64
import subprocess
from pathlib import Path
from typing import Any

import pytest
from githubkit import GitHub
from githubkit.exception import RequestFailed

from tests.kit.fake_github_kit import NAME, OWNER, run_git
from tests.kit.github import FakeGitHub
from tests.kit.github_ci_model import Ruleset

WORKFLOW = ".github/workflows/ci.yml"


@pytest.fixture
def http_gh(fake_github_factory: Any) -> FakeGitHub:
    gh: FakeGitHub = fake_github_factory(git_http=True)
    gh.add_repo(OWNER, NAME, {"src/a.py": "x = 1\n", WORKFLOW: "on: push\n"})
    return gh


def api_commit(client: GitHub[Any], parent: str, files: dict[str, str | None],
               message: str = "api change", **custom: Any) -> str:
    rest = client.rest("2022-11-28")
    base_tree = rest.git.get_commit(OWNER, NAME, parent).json()["tree"]["sha"]
    entries = []
    for path, text in files.items():
        sha = None
        if text is not None:
            sha = rest.git.create_blob(OWNER, NAME, data={
                "content": base64.b64encode(text.encode()).decode(),
                "encoding": "base64"}).json()["sha"]
        entries.append({"path": path, "mode": "100644", "type": "blob", "sha": sha})
    tree = rest.git.create_tree(OWNER, NAME, data={"base_tree": base_tree,
                                                   "tree": entries}).json()["sha"]
    return str(rest.git.create_commit(OWNER, NAME, data={
        "message": message, "tree": tree, "parents": [parent], **custom}).json()["sha"])


def verification(client: GitHub[Any], sha: str) -> dict[str, Any]:
    data = client.rest("2022-11-28").repos.get_commit(OWNER, NAME, sha).json()
    result: dict[str, Any] = data["commit"]["verification"]
    return result


def test_api_commits_are_verified_and_refs_move_only_forward(http_gh: FakeGitHub) -> None:
    client = http_gh.client()
    rest = client.rest("2022-11-28")
    main = http_gh.branch_head(f"{OWNER}/{NAME}", "main")
    assert main is not None
    sha = api_commit(client, main, {"src/a.py": "x = 2\n", "src/b.py": "y = 1\n"})
    assert verification(client, sha)["verified"] is True
    assert verification(client, sha)["reason"] == "valid"
    assert verification(client, main) == {"verified": False, "reason": "unsigned",
                                          "signature": None, "payload": None, "verified_at": None}
    commit = rest.git.get_commit(OWNER, NAME, sha).json()
    assert commit["committer"]["name"] == "GitHub" and commit["author"]["name"] == "stepwise[bot]"
    assert commit["author"]["email"].endswith("+stepwise[bot]@users.noreply.github.com")
    with pytest.raises(RequestFailed) as missing:
        rest.git.update_ref(OWNER, NAME, "heads/feature", data={"sha": sha, "force": False})
    assert missing.value.response.json()["message"] == "Reference does not exist"
    rest.git.create_ref(OWNER, NAME, data={"ref": "refs/heads/feature", "sha": sha})
    assert http_gh.read_file(f"{OWNER}/{NAME}", "src/b.py", "feature") == "y = 1\n"
    with pytest.raises(RequestFailed) as backwards:
        rest.git.update_ref(OWNER, NAME, "heads/feature", data={"sha": main, "force": False})
    assert backwards.value.response.status_code == 422
    assert backwards.value.response.json()["message"] == "Update is not a fast forward"
    gone = api_commit(client, sha, {"src/b.py": None})
    rest.git.update_ref(OWNER, NAME, "heads/feature", data={"sha": gone, "force": False})
    assert http_gh.read_file(f"{OWNER}/{NAME}", "src/b.py", "feature") is None
    assert http_gh.effects[-1] == f"{OWNER}/{NAME}:ref-updated:feature:{gone[:7]}"


@pytest.mark.parametrize("entry", [
    {"path": WORKFLOW, "mode": "100644", "type": "blob", "content": "on: [push]\n"},
    {"path": WORKFLOW, "mode": "100644", "type": "blob", "sha": None},
    {"path": ".github/workflows/new.yml", "mode": "100644", "type": "blob", "content": "x\n"},
    {"path": ".github", "mode": "040000", "type": "tree", "sha": None}])
def test_an_app_without_workflows_write_is_refused_the_tree_touching_workflows(
        http_gh: FakeGitHub, entry: dict[str, Any]) -> None:
    """Where GitHub refuses it: POST git/trees, 403 "Resource not accessible by integration"."""
    del http_gh.installations[1].permissions["workflows"]  # an installation from before
    client = http_gh.client()
    rest = client.rest("2022-11-28")
    main = http_gh.branch_head(f"{OWNER}/{NAME}", "main")
    assert main is not None
    base_tree = rest.git.get_commit(OWNER, NAME, main).json()["tree"]["sha"]
    with pytest.raises(RequestFailed) as refused:
        rest.git.create_tree(OWNER, NAME, data={"base_tree": base_tree, "tree": [entry]})
    assert refused.value.response.status_code == 403
    assert refused.value.response.json()["message"] == "Resource not accessible by integration"
    assert "workflows=write" in refused.value.response.headers["x-accepted-github-permissions"]
    ok = rest.git.create_tree(OWNER, NAME, data={"base_tree": base_tree, "tree": [
        {"path": ".github/dependabot.yml", "mode": "100644", "type": "blob", "content": "v\n"}]})
    assert ok.status_code == 201


def test_an_app_without_workflows_write_may_not_move_a_ref_to_a_workflow_change(
        http_gh: FakeGitHub) -> None:
    client = http_gh.client()
    rest = client.rest("2022-11-28")
    main = http_gh.branch_head(f"{OWNER}/{NAME}", "main")
    assert main is not None
    http_gh.installations[1].permissions["workflows"] = "write"
    changed = api_commit(http_gh.client(), main, {WORKFLOW: "on: [push]\n"})
    del http_gh.installations[1].permissions["workflows"]  # an installation from before
    client = http_gh.client()
    rest = client.rest("2022-11-28")
    with pytest.raises(RequestFailed) as refused:
        rest.git.create_ref(OWNER, NAME, data={"ref": "refs/heads/ci", "sha": changed})
    assert refused.value.response.status_code == 422
    assert refused.value.response.json()["message"] == (
        f"refusing to allow a GitHub App to create or update workflow `{WORKFLOW}` without "
        "`workflows` permission")
    other = api_commit(client, main, {"src/a.py": "x = 3\n"})
    rest.git.create_ref(OWNER, NAME, data={"ref": "refs/heads/ok", "sha": other})
    http_gh.installations[1].permissions["workflows"] = "write"
    granted = http_gh.client()
    granted.rest("2022-11-28").git.create_ref(OWNER, NAME, data={"ref": "refs/heads/ci",
                                                                   "sha": changed})
    assert http_gh.branch_head(f"{OWNER}/{NAME}", "ci") == changed


def push(gh: FakeGitHub, work: Path, refspec: str, token: str) -> subprocess.CompletedProcess[str]:
    url = gh.repos[f"{OWNER}/{NAME}"].clone_url.replace("http://", f"http://x-access-token:{token}@")
    return subprocess.run(["git", "push", "-q", url, refspec], cwd=work, capture_output=True,
                          text=True, check=False)


def test_a_push_that_merges_the_bases_workflow_change_is_refused_without_the_permission(
        http_gh: FakeGitHub, tmp_path: Path) -> None:
    full = f"{OWNER}/{NAME}"
    http_gh.push_files(full, "feature", {"src/a.py": "x = 5\n"}, "feature work")
    http_gh.push_files(full, "main", {WORKFLOW: "on: [push, pull_request]\n"}, "bump actions")
    del http_gh.installations[1].permissions["workflows"]  # an installation from before
    token = http_gh.issue_token(1).token
    work = tmp_path / "work"
    url = http_gh.repos[full].clone_url.replace("http://", f"http://x-access-token:{token}@")
    run_git(tmp_path, "clone", "-q", "-b", "feature", url, "work")
    run_git(work, "fetch", "-q", "origin", "main")
    run_git(work, "merge", "-q", "--no-edit", "FETCH_HEAD")
    refused = push(http_gh, work, "HEAD:refs/heads/feature", token)
    assert refused.returncode != 0
    assert (f"refusing to allow a GitHub App to create or update workflow `{WORKFLOW}` without "
            "`workflows` permission") in refused.stderr
    assert http_gh.commits(full, "feature")[0].subject == "feature work"
    run_git(work, "reset", "-q", "--hard", "origin/feature")
    (work / "notes.txt").write_text("plain\n")
    run_git(work, "add", "notes.txt")
    run_git(work, "commit", "-q", "-m", "no workflow here")
    assert push(http_gh, work, "HEAD:refs/heads/feature", token).returncode == 0
    granted = http_gh.issue_token(1, permissions={**http_gh.installations[1].permissions,
                                                  "workflows": "write"}).token
    run_git(work, "merge", "-q", "--no-edit", "FETCH_HEAD")
    assert push(http_gh, work, "HEAD:refs/heads/feature", granted).returncode == 0


SOMEONE = {"name": "Stepwise", "email": "stepwise@example.invalid",
           "date": "2026-12-01T10:00:00Z"}


@pytest.mark.parametrize(("custom", "reason"), [
    ({"author": SOMEONE}, "unsigned"), ({"committer": SOMEONE}, "unsigned"),
    ({"author": SOMEONE, "committer": SOMEONE}, "unsigned"),
    ({"signature": "-----BEGIN PGP SIGNATURE-----\n\nabc\n-----END PGP SIGNATURE-----"},
     "unknown_key")])
def test_github_does_not_sign_a_commit_made_with_a_custom_author_committer_or_signature(
        http_gh: FakeGitHub, custom: dict[str, Any], reason: str) -> None:
    """GitHub's "Signature verification for bots": an App's API commit is signed only when the
    request names no author, committer or signature; code sending one would get unverified
    commits on GitHub, and does against the fake."""
    client = http_gh.client()
    main = http_gh.branch_head(f"{OWNER}/{NAME}", "main")
    assert main is not None
    sha = api_commit(client, main, {"src/a.py": "x = 3\n"}, **custom)
    shown = verification(client, sha)
    assert shown["verified"] is False and shown["reason"] == reason
    commit = client.rest("2022-11-28").git.get_commit(OWNER, NAME, sha).json()
    person = custom.get("author") or custom.get("committer")
    if person:
        assert commit["author"]["name"] == "Stepwise"
        assert commit["author"]["date"] == "2026-12-01T10:00:00Z"
    plain = api_commit(client, main, {"src/a.py": "x = 3\n"})
    assert verification(client, plain)["verified"] is True and plain != sha


def mergeable(client: GitHub[Any], pr: int) -> tuple[Any, str]:
    data = client.rest("2022-11-28").pulls.get(OWNER, NAME, pr).json()
    return data["mergeable"], data["mergeable_state"]


@pytest.mark.parametrize("rule", ["protection", "ruleset"])
def test_a_base_requiring_signatures_refuses_to_merge_unsigned_commits(
        http_gh: FakeGitHub, rule: str) -> None:
    full = f"{OWNER}/{NAME}"
    repo = http_gh.repos[full]
    if rule == "protection":
        repo.ci.signed_branches.add("main")
    else:
        repo.ci.rulesets.append(Ruleset(1, "signed", ["~DEFAULT_BRANCH"], [],
                                        required_signatures=True))
    client = http_gh.client()
    rest = client.rest("2022-11-28")
    main = http_gh.branch_head(full, "main")
    assert main is not None
    signed = api_commit(client, main, {"src/a.py": "x = 9\n"})
    rest.git.create_ref(OWNER, NAME, data={"ref": "refs/heads/feature", "sha": signed})
    opened = rest.pulls.create(OWNER, NAME, title="t", head="feature", base="main").json()
    pr = opened["number"]
    assert opened["mergeable"] is None  # GitHub computes it in the background
    assert mergeable(client, pr) == (True, "clean")
    http_gh.push_files(full, "feature", {"src/c.py": "z = 1\n"}, "pushed, unsigned")
    assert mergeable(client, pr) == (None, "unknown")  # the head moved: computed again
    assert mergeable(client, pr) == (True, "blocked")
    with pytest.raises(RequestFailed) as refused:
        rest.pulls.merge(OWNER, NAME, pr)
    assert refused.value.response.status_code == 405
    assert "verified signatures" in refused.value.response.json()["message"]
    if rule == "protection":  # readable with administration: read (a 404 where it is not set)
        shown = rest.repos.get_commit_signature_protection(OWNER, NAME, "main")
        assert shown.json()["enabled"] is True
    del http_gh.installations[1].permissions["administration"]  # an owner who did not accept it
    with pytest.raises(RequestFailed) as admin_only:
        without = http_gh.client()  # kept: githubkit's namespaces need their client alive
        without.rest("2022-11-28").repos.get_commit_signature_protection(OWNER, NAME, "main")
    assert admin_only.value.response.status_code == 403
    head = http_gh.branch_head(full, "feature")
    assert head is not None
    fixed = api_commit(client, main, {"src/a.py": "x = 9\n", "src/c.py": "z = 1\n"})
    rest.git.update_ref(OWNER, NAME, "heads/feature", data={"sha": fixed, "force": True})
    assert mergeable(client, pr) == (None, "unknown")
    assert mergeable(client, pr) == (True, "clean")
    merged = rest.pulls.merge(OWNER, NAME, pr).json()
    assert merged["merged"] is True
    assert verification(client, merged["sha"])["verified"] is True
