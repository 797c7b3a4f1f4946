"""The fake GitHub's CI endpoints (checks, statuses, required checks, Actions) and the CI player,
driven by the real githubkit client over loopback HTTP."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import githubkit.webhooks
import pytest
from githubkit import GitHub
from githubkit.exception import RequestFailed

from tests.kit.github import FakeGitHub
from tests.kit.github_ci import OTHER_CI, CiPlayer
from tests.kit.webhooks import sign

OWNER, NAME = "octo", "widgets"
SECRET = "ci-s3cret"


@pytest.fixture
def gh(fake_github: FakeGitHub) -> FakeGitHub:
    fake_github.add_repo(OWNER, NAME, {"src/a.py": "x = 1\n", "src/b.py": "y = 2\n"})
    return fake_github


@pytest.fixture
def client(gh: FakeGitHub) -> GitHub[Any]:
    return gh.client()


@pytest.fixture
def sha(gh: FakeGitHub) -> str:
    head = gh.branch_head(f"{OWNER}/{NAME}", "main")
    assert head is not None
    return head


@pytest.fixture
def ci(gh: FakeGitHub) -> CiPlayer:
    return CiPlayer(gh, gh.repos[f"{OWNER}/{NAME}"])


def refused(call: Any) -> Any:
    with pytest.raises(RequestFailed) as caught:
        call()
    return caught.value.response


def run_body(sha: str, **extra: Any) -> dict[str, Any]:
    return {"name": "Stepwise / batch 1", "head_sha": sha, "external_id": "job-1:batch:1",
            "status": "completed", "conclusion": "success",
            "output": {"title": "ok", "summary": "all good"}, **extra}


def test_a_check_run_is_created_updated_and_listed_for_its_ref(gh: FakeGitHub, client: GitHub[Any],
                                                               sha: str) -> None:
    body = run_body(sha, status="in_progress")
    del body["conclusion"]
    created = client.rest.checks.create(OWNER, NAME, data=body).json()
    assert created["status"] == "in_progress" and created["app"]["slug"] == gh.app_slug
    assert created["external_id"] == "job-1:batch:1"
    updated = client.rest.checks.update(OWNER, NAME, created["id"], data={
        "status": "completed", "conclusion": "failure",
        "output": {"title": "t", "summary": "s", "annotations": [
            {"path": "src/a.py", "start_line": 1, "end_line": 1, "annotation_level": "failure",
             "message": "broken"}]}}).json()
    assert (updated["status"], updated["conclusion"]) == ("completed", "failure")
    assert updated["output"]["annotations_count"] == 1
    listed = client.rest.checks.list_for_ref(OWNER, NAME, sha, check_name="Stepwise / batch 1").json()
    assert listed["total_count"] == 1 and listed["check_runs"][0]["id"] == created["id"]
    assert client.rest.checks.list_for_ref(OWNER, NAME, sha, check_name="other").json()["total_count"] == 0
    annotations = client.rest.checks.list_annotations(OWNER, NAME, created["id"]).json()
    assert [(a["path"], a["start_line"], a["message"]) for a in annotations] == [("src/a.py", 1, "broken")]


def test_creating_a_run_checks_its_fields_like_github(gh: FakeGitHub, client: GitHub[Any],
                                                     sha: str) -> None:
    gh.openapi_requests_checked = False  # bad requests on purpose: GitHub answers them 422
    def post(body: dict[str, Any]) -> Any:  # raw: githubkit would refuse some bodies itself
        return client.request("POST", f"/repos/{OWNER}/{NAME}/check-runs", json=body)

    assert refused(lambda: post(run_body("f" * 40))).status_code == 422  # no such commit
    body = run_body(sha)
    del body["conclusion"]
    assert refused(lambda: post(body)).status_code == 422  # completed without a conclusion
    too_many = [{"path": "src/a.py", "start_line": i, "end_line": i, "annotation_level": "warning",
                 "message": f"m{i}"} for i in range(1, 52)]
    response = refused(lambda: post(run_body(
        sha, output={"title": "t", "summary": "s", "annotations": too_many})))
    assert response.status_code == 422 and "50" in json.dumps(response.json())


def test_filter_latest_keeps_the_newest_run_of_each_name_and_app(ci: CiPlayer, client: GitHub[Any],
                                                                 sha: str) -> None:
    first = ci.report(sha, "tests", "failure")
    again = ci.report(sha, "tests", "success")
    other = ci.app_check(sha, "tests", "success", app=OTHER_CI)
    latest = client.rest.checks.list_for_ref(OWNER, NAME, sha).json()["check_runs"]
    assert sorted(r["id"] for r in latest) == sorted([again.run.id, other.run.id])
    every = client.rest.checks.list_for_ref(OWNER, NAME, sha, filter_="all").json()["check_runs"]
    assert first.run.id in {r["id"] for r in every} and len(every) == 3
    only_actions = client.rest.checks.list_for_ref(OWNER, NAME, sha, app_id=15368).json()
    assert [r["id"] for r in only_actions["check_runs"]] == [again.run.id]


def test_check_runs_and_annotations_are_paged_with_link_headers(ci: CiPlayer, client: GitHub[Any],
                                                                sha: str) -> None:
    for index in range(5):
        ci.report(sha, f"job-{index}", "success")
    page = client.rest.checks.list_for_ref(OWNER, NAME, sha, per_page=2, page=1)
    assert page.json()["total_count"] == 5 and len(page.json()["check_runs"]) == 2
    assert 'rel="next"' in page.headers["link"]
    last = client.rest.checks.list_for_ref(OWNER, NAME, sha, per_page=2, page=3).json()
    assert len(last["check_runs"]) == 1
    played = ci.report(sha, "lint", "failure", annotations=[("src/a.py", n, f"e{n}") for n in range(1, 4)])
    second = client.rest.checks.list_annotations(OWNER, NAME, played.run.id, per_page=2, page=2).json()
    assert [a["message"] for a in second] == ["e3"]


def test_every_ci_route_refuses_a_token_without_its_permission(gh: FakeGitHub, client: GitHub[Any],
                                                               ci: CiPlayer, sha: str) -> None:
    played = ci.report(sha, "tests", "failure", log="boom\n")
    ci.status(sha, "ci/lint", "success")
    gh.installations[1].permissions = {"metadata": "read", "contents": "read"}
    calls = {
        "checks=write": lambda: client.rest.checks.create(OWNER, NAME, data=run_body(sha)),
        "checks=read": lambda: client.rest.checks.list_for_ref(OWNER, NAME, sha),
        "statuses=read": lambda: client.rest.repos.get_combined_status_for_ref(OWNER, NAME, sha),
        "actions=read": lambda: client.rest.actions.download_job_logs_for_workflow_run(
            OWNER, NAME, played.run.id),
        "actions=write": lambda: client.rest.actions.re_run_workflow_failed_jobs(
            OWNER, NAME, played.workflow.id if played.workflow else 0),
        "administration=read": lambda: client.rest.repos.get_status_checks_protection(OWNER, NAME, "main"),
    }
    for permission, call in calls.items():
        response = refused(call)
        assert response.status_code == 403, permission
        assert response.json()["message"] == "Resource not accessible by integration"
        assert response.headers["X-Accepted-GitHub-Permissions"] == permission
    assert client.rest.repos.get_branch(OWNER, NAME, "main").json()["name"] == "main"  # contents
    assert client.rest.repos.get_branch_rules(OWNER, NAME, "main").json() == []  # metadata


def test_commit_statuses_and_the_combined_state(ci: CiPlayer, client: GitHub[Any], sha: str) -> None:
    combined = client.rest.repos.get_combined_status_for_ref(OWNER, NAME, sha).json()
    assert (combined["state"], combined["total_count"]) == ("pending", 0)
    ci.status(sha, "ci/lint", "pending")
    ci.status(sha, "ci/lint", "success", target_url="https://ci.example/1")
    ci.status(sha, "ci/unit", "success")
    combined = client.rest.repos.get_combined_status_for_ref(OWNER, NAME, sha).json()
    assert combined["state"] == "success" and combined["sha"] == sha
    assert sorted((s["context"], s["state"]) for s in combined["statuses"]) == [
        ("ci/lint", "success"), ("ci/unit", "success")]
    assert len(client.rest.repos.list_commit_statuses_for_ref(OWNER, NAME, sha).json()) == 3
    ci.status(sha, "ci/unit", "error")
    assert client.rest.repos.get_combined_status_for_ref(OWNER, NAME, sha).json()["state"] == "failure"


def test_required_checks_from_protection_and_rulesets(ci: CiPlayer, client: GitHub[Any]) -> None:
    branch = client.rest.repos.get_branch(OWNER, NAME, "main").json()
    assert branch["protected"] is False and branch["protection"]["required_status_checks"]["contexts"] == []
    ci.protect("main", ["tests", "ci/lint"], strict=True)
    ci.ruleset("main", ["build"])
    ci.ruleset("release", ["signed"])
    branch = client.rest.repos.get_branch(OWNER, NAME, "main").json()
    assert branch["protected"] is True
    assert branch["protection"]["required_status_checks"]["contexts"] == ["tests", "ci/lint"]
    rules = client.rest.repos.get_branch_rules(OWNER, NAME, "main").json()
    assert [[c["context"] for c in r["parameters"]["required_status_checks"]] for r in rules] == [["build"]]
    assert refused(lambda: client.rest.repos.get_branch(OWNER, NAME, "gone")).status_code == 404


def test_a_job_log_is_a_redirect_to_a_download_url_the_fake_serves(gh: FakeGitHub, client: GitHub[Any],
                                                                  ci: CiPlayer, sha: str) -> None:
    played = ci.report(sha, "tests", "failure", log="step 1\nFAILED src/a.py::test_x\n")
    assert played.job is not None and played.job.id == played.run.id  # a job is its check run
    no_follow = gh.client(follow_redirects=False)
    redirect = no_follow.rest.actions.download_job_logs_for_workflow_run(OWNER, NAME, played.job.id)
    assert redirect.status_code == 302 and "sig=" in redirect.headers["location"]
    followed = client.rest.actions.download_job_logs_for_workflow_run(OWNER, NAME, played.job.id)
    assert followed.text == "step 1\nFAILED src/a.py::test_x\n"
    import httpx

    tampered = redirect.headers["location"].replace("sig=", "sig=0")
    assert httpx.get(tampered, trust_env=False).status_code == 403


def test_workflow_runs_jobs_and_rerunning_the_failed_ones(gh: FakeGitHub, client: GitHub[Any],
                                                          ci: CiPlayer, sha: str) -> None:
    ci.report(sha, "lint", "success")
    failed = ci.report(sha, "tests", "failure")
    runs = client.rest.actions.list_workflow_runs_for_repo(OWNER, NAME, head_sha=sha).json()
    assert runs["total_count"] == 1 and runs["workflow_runs"][0]["conclusion"] == "failure"
    run_id = runs["workflow_runs"][0]["id"]
    jobs = client.rest.actions.list_jobs_for_workflow_run(OWNER, NAME, run_id).json()["jobs"]
    assert sorted((j["name"], j["conclusion"]) for j in jobs) == [("lint", "success"), ("tests", "failure")]
    assert client.rest.actions.get_job_for_workflow_run(OWNER, NAME, failed.run.id).json()["run_id"] == run_id
    gh.installations[1].permissions = {**gh.installations[1].permissions, "actions": "write"}
    gh.expire_tokens()
    client = gh.client()
    assert client.rest.actions.re_run_workflow_failed_jobs(OWNER, NAME, run_id).status_code == 201
    again = ci.rerun_requested("success")
    assert [p.run.name for p in again] == ["tests"]
    latest = client.rest.actions.list_jobs_for_workflow_run(OWNER, NAME, run_id).json()["jobs"]
    assert [(j["name"], j["run_attempt"], j["conclusion"]) for j in latest] == [("tests", 2, "success")]


def test_only_the_app_that_made_a_run_may_change_or_rerequest_it(client: GitHub[Any], ci: CiPlayer,
                                                                 sha: str) -> None:
    theirs = ci.report(sha, "tests", "failure")
    assert refused(lambda: client.rest.checks.update(
        OWNER, NAME, theirs.run.id, data={"status": "in_progress"})).status_code == 403
    assert refused(lambda: client.rest.checks.rerequest_run(OWNER, NAME, theirs.run.id)).status_code == 403
    suite = client.rest.checks.get(OWNER, NAME, theirs.run.id).json()["check_suite"]["id"]
    refusal = refused(lambda: client.rest.checks.rerequest_suite(OWNER, NAME, suite))
    assert refusal.status_code == 422 and "only the app that created it" in refusal.text
    assert ci.rerun_requested("success") == []  # nothing re-runs Actions but Actions' re-run


def test_a_refused_actions_rerun_plays_nothing(gh: FakeGitHub, ci: CiPlayer, sha: str) -> None:
    failed = ci.report(sha, "tests", "failure")
    assert failed.workflow is not None
    gh.installations[1].permissions["actions"] = "read"  # an installation that never accepted it
    read_only = gh.client()
    refusal = refused(lambda: read_only.rest.actions.re_run_workflow_failed_jobs(
        OWNER, NAME, failed.workflow.id))  # type: ignore[union-attr]
    assert refusal.status_code == 403
    assert ci.rerun_requested("success") == []  # the player no longer pretends


class _Recorder(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.server.got.append((self.headers["X-GitHub-Event"], self.headers["X-Hub-Signature-256"],  # type: ignore[attr-defined]
                                body))
        self.send_response(202)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        return


@pytest.fixture
def recorder() -> Iterator[tuple[str, list[tuple[str, str, bytes]]]]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    server.got = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", server.got  # type: ignore[attr-defined]
    server.shutdown()
    server.server_close()


def test_the_player_sends_signed_webhooks_in_githubs_order_and_shapes(
        gh: FakeGitHub, sha: str, recorder: tuple[str, list[tuple[str, str, bytes]]]) -> None:
    url, got = recorder
    ci = CiPlayer(gh, gh.repos[f"{OWNER}/{NAME}"], deliver_to=url, secret=SECRET)
    ci.report(sha, "tests", "failure", annotations=[("src/a.py", 1, "bad")])
    ci.status(sha, "ci/lint", "success")
    ci.report(sha, "quiet", "success", webhooks=False)  # a missed delivery sends nothing
    events = [(name, json.loads(body).get("action")) for name, _, body in got]
    assert events == [("workflow_run", "requested"), ("check_run", "created"),
                      ("workflow_run", "in_progress"), ("check_run", "completed"),
                      ("workflow_run", "completed"), ("check_suite", "completed"), ("status", None)]
    for name, signature, body in got:
        assert signature == sign(SECRET, body)
        payload = json.loads(body)
        githubkit.webhooks.parse_obj(name, payload)  # type: ignore[arg-type]
        assert payload["repository"]["full_name"] == f"{OWNER}/{NAME}"
        assert payload["installation"]["id"] == 1
        head = payload.get(name, payload)
        assert head.get("head_sha", head.get("sha")) == sha
    completed = json.loads(got[3][2])["check_run"]
    assert (completed["conclusion"], completed["app"]["slug"]) == ("failure", "github-actions")
