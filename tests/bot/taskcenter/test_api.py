"""The JSON API: same filters as the pages, paginated, the record behind each job, OpenAPI."""

from __future__ import annotations

from fastapi.testclient import TestClient

from bot.plumbing.redis_store import RedisStore
from jobs.kernel.job import Job
from tests.bot.taskcenter.conftest import GROUPS, JOBS, TOKEN

LEAKED = "ghs_" + "Z9y8X7w6V5" * 4  # an installation token a command printed


def test_list_filters_and_pages(logged_in: TestClient, seeded: dict[str, Job]) -> None:
    everything = logged_in.get("/api/jobs").json()
    assert [j["id"] for j in everything["jobs"]] == [seeded[n].id for n in reversed(JOBS)]
    assert everything["total"] == len(JOBS) and everything["pages"] == 1
    assert everything["group_counts"] == {g: len(names) for g, names in GROUPS.items()}
    for group, names in GROUPS.items():
        body = logged_in.get("/api/jobs", params={"status": group}).json()
        assert {j["id"] for j in body["jobs"]} == {seeded[n].id for n in names}
        assert all(j["group"] == group for j in body["jobs"])
    page = logged_in.get("/api/jobs", params={"per_page": 5, "page": 2}).json()
    assert [j["id"] for j in page["jobs"]] == [seeded[n].id for n in list(reversed(JOBS))[5:10]]
    assert page["pages"] == 3 and page["total"] == 12
    scoped = logged_in.get("/api/jobs", params={"repo": "octo-org/gadgets", "q": "tidy"}).json()
    assert [j["id"] for j in scoped["jobs"]] == [seeded["failure_gate"].id]
    assert scoped["group_counts"]["needs_human"] == 1 and scoped["group_counts"]["running"] == 0


def test_a_summary_counts_the_recorded_batches(logged_in: TestClient,
                                               seeded: dict[str, Job]) -> None:
    body = logged_in.get("/api/jobs", params={"status": "completed"}).json()
    (row,) = body["jobs"]
    assert row["batches"] == {"total": 3, "done": 3, "pending": 0, "in_progress": 0,
                              "awaiting_ci": 0, "completed": 1, "failed": 0, "skipped": 1,
                              "reverted": 1}
    assert row["pull_number"] == 69 and row["url"] == f"/jobs/{seeded['completed'].id}"
    assert row["issue_url"] == "https://github.com/octo-org/widgets/issues/29"


def test_one_job_with_its_gate_and_record(logged_in: TestClient, seeded: dict[str, Job]) -> None:
    job = seeded["failure_gate"]
    response = logged_in.get(f"/api/jobs/{job.id}")
    assert response.status_code == 200 and response.headers["etag"] == f'"{job.version}"'
    body = response.json()
    gate = body["summary"]["gate"]
    assert gate["kind"] == "failure" and gate["needs"] == "human" and gate["batch"] == 2
    assert gate["comment"] == "/stepwise skip <reason>" and gate["where"] == "pull request #66"
    assert gate["other_comments"] == ["/stepwise revert <batch>", "/stepwise cancel"]
    assert gate["report"]["code"] == "validation_failed"
    record = body["record"]
    assert record["id"] == job.id and record["title"] == job.title
    attempts = record["batches"][1]["attempts"]
    assert [a["commands"][0]["exit_code"] for a in attempts] == [1, 1]
    assert attempts[1]["error"]["retry_class"] == "needs_human"
    assert logged_in.get("/api/jobs/missing-1").status_code == 404


def test_if_none_match_answers_304_until_the_record_changes(logged_in: TestClient,
                                                            seeded: dict[str, Job]) -> None:
    job = seeded["running"]
    tag = logged_in.get(f"/api/jobs/{job.id}").headers["etag"]
    assert logged_in.get(f"/api/jobs/{job.id}", headers={"If-None-Match": tag}).status_code == 304
    store = RedisStore(logged_in.app.state.redis)  # type: ignore[attr-defined]
    fresh = store.load_id(job.id)
    assert fresh is not None
    fresh.instructions.append("keep the log level")
    store.save(fresh)
    changed = logged_in.get(f"/api/jobs/{job.id}", headers={"If-None-Match": tag})
    assert changed.status_code == 200 and changed.json()["record"]["instructions"]


def test_secrets_in_a_record_are_redacted(logged_in: TestClient, seeded: dict[str, Job]) -> None:
    job = seeded["running"]
    store = RedisStore(logged_in.app.state.redis)  # type: ignore[attr-defined]
    fresh = store.load_id(job.id)
    assert fresh is not None
    fresh.batches[0].attempts[0].commands[0].output_tail = f"token {LEAKED} printed"
    store.save(fresh)
    assert LEAKED not in logged_in.get(f"/api/jobs/{job.id}").text
    assert LEAKED not in logged_in.get(f"/jobs/{job.id}").text


def test_bad_filters_are_422(logged_in: TestClient) -> None:
    assert logged_in.get("/api/jobs", params={"status": "bogus"}).status_code == 422
    assert logged_in.get("/api/jobs", params={"per_page": 1000}).status_code == 422
    assert logged_in.get("/api/jobs", params={"page": 0}).status_code == 422


def test_the_api_is_documented_in_openapi(logged_in: TestClient) -> None:
    schema = logged_in.get("/openapi.json").json()
    assert "/webhooks/github" in schema["paths"] and "/healthz" in schema["paths"]
    listing = schema["paths"]["/api/jobs"]["get"]
    assert {p["name"] for p in listing["parameters"]} == {"status", "repo", "q", "page", "per_page"}
    assert listing["responses"]["200"]["content"]["application/json"]["schema"]["$ref"].endswith(
        "/JobPage")
    assert "/api/jobs/{job_id}" in schema["paths"] and "/metrics" in schema["paths"]
    assert "JobDetail" in schema["components"]["schemas"]
    assert "/jobs" not in schema["paths"] and "/login" not in schema["paths"]


def test_the_openapi_ui_is_behind_the_task_centers_login(client: TestClient) -> None:
    response = client.get("/docs")
    assert response.status_code == 303 and "/login" in response.headers["location"]
    client.post("/login", data={"token": TOKEN, "next": "/docs"})
    page = client.get("/docs")
    assert page.status_code == 200 and "swagger" in page.text.lower()
    assert "/openapi.json" in page.text


def test_the_openapi_schema_is_closed_with_the_same_token(client: TestClient) -> None:
    """`/openapi.json` was public while `/docs` was closed (issue 40): now the same login or
    Bearer token opens both; a guess is refused and counted."""
    assert client.get("/openapi.json").status_code == 401
    assert client.get("/openapi.json", headers={"Authorization": "Bearer wrong"}).status_code \
        == 401
    assert "/api/jobs" in client.get("/openapi.json", headers={
        "Authorization": f"Bearer {TOKEN}"}).json()["paths"]
    client.post("/login", data={"token": TOKEN, "next": "/docs"})
    assert "/api/jobs" in client.get("/openapi.json").json()["paths"]
