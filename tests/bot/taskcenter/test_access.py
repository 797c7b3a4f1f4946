"""Access: the task center is off without STEPWISE_DASHBOARD_TOKEN; with it, nothing is shown
until the token is given (pages redirect to the login form, the API answers 401)."""

from __future__ import annotations

import time

import pytest
import redis
from fastapi.testclient import TestClient

from bot.taskcenter.auth import (
    COOKIE,
    SESSION_MAX_AGE_S,
    serializer,
    session_cookie,
    valid_session,
)
from bot.web.app import create_app
from jobs.kernel.job import Job
from tests.bot.taskcenter.conftest import EVIL_TITLE, TOKEN, settings

PAGES = ["/jobs", "/jobs?status=needs_human", "/jobs/{id}"]
API = ["/api/jobs", "/api/jobs?status=failed", "/api/jobs/{id}"]


def paths(templates: list[str], job: Job) -> list[str]:
    return [t.format(id=job.id) for t in templates]


def assert_no_job_data(text: str, jobs: dict[str, Job]) -> None:
    for job in jobs.values():
        assert job.title not in text and job.id not in text
    assert "alert(" not in text and EVIL_TITLE not in text


def test_without_a_token_setting_the_task_center_is_off(redis_url: str, connection: redis.Redis,
                                                         seeded: dict[str, Job]) -> None:
    app = create_app(settings(redis_url, dashboard_token=None), connection)
    with TestClient(app, follow_redirects=False) as client:
        job = seeded["failure_gate"]
        for path in [*paths(PAGES, job), *paths(API, job), "/login"]:
            response = client.get(path, headers={"Authorization": "Bearer anything"})
            assert response.status_code == 404, path
            assert "STEPWISE_DASHBOARD_TOKEN" in response.text
            assert_no_job_data(response.text, seeded)
        assert client.post("/login", data={"token": ""}).status_code == 404


def test_pages_redirect_to_the_login_form_and_show_nothing(client: TestClient,
                                                           seeded: dict[str, Job]) -> None:
    job = seeded["failure_gate"]
    for path in paths(PAGES, job):
        response = client.get(path)
        assert response.status_code == 303, path
        assert response.headers["location"].startswith("/login?next=%2Fjobs")
        assert_no_job_data(response.text, seeded)
    form = client.get(f"/login?next=/jobs/{job.id}")
    assert form.status_code == 200 and 'type="password"' in form.text
    assert f'value="/jobs/{job.id}"' in form.text


def test_the_api_answers_401_without_the_token(client: TestClient, seeded: dict[str, Job]) -> None:
    for path in paths(API, seeded["failure_gate"]):
        for headers in ({}, {"Authorization": "Bearer wrong-token"}, {"Authorization": TOKEN},
                        {"Cookie": f"{COOKIE}=forged.value.sig"}):
            response = client.get(path, headers=headers)
            assert response.status_code == 401, (path, headers)
            assert response.headers["www-authenticate"].startswith("Bearer")
            assert_no_job_data(response.text, seeded)


def test_a_wrong_token_is_refused_and_sets_no_cookie(client: TestClient,
                                                    seeded: dict[str, Job]) -> None:
    response = client.post("/login", data={"token": TOKEN + "x", "next": "/jobs"})
    assert response.status_code == 401 and "not the dashboard token" in response.text
    assert COOKIE not in response.headers.get("set-cookie", "")
    assert client.get("/jobs").status_code == 303


def test_the_token_sets_a_signed_http_only_cookie(client: TestClient,
                                                 seeded: dict[str, Job]) -> None:
    job = seeded["running"]
    response = client.post("/login", data={"token": TOKEN, "next": f"/jobs/{job.id}"})
    assert response.status_code == 303 and response.headers["location"] == f"/jobs/{job.id}"
    cookie = response.headers["set-cookie"]
    assert cookie.startswith(f"{COOKIE}=") and "HttpOnly" in cookie
    assert "samesite=lax" in cookie.lower() and TOKEN not in cookie
    assert client.get(f"/jobs/{job.id}").status_code == 200
    assert client.get("/api/jobs").status_code == 200
    # The cookie is bound to the token: a session signed with another token is worthless.
    client.cookies.clear()
    client.cookies.set(COOKIE, serializer("another-token").dumps({"v": 1}))
    assert client.get("/jobs").status_code == 303


def test_logout_ends_the_session(logged_in: TestClient) -> None:
    assert logged_in.get("/jobs").status_code == 200
    response = logged_in.post("/logout")
    assert response.status_code == 303 and response.headers["location"] == "/login"
    assert logged_in.get("/jobs").status_code == 303


def test_login_only_follows_paths_of_this_site(client: TestClient) -> None:
    for target in ("//evil.example/jobs", "https://evil.example/", "/\\evil.example", "jobs"):
        response = client.post("/login", data={"token": TOKEN, "next": target})
        assert response.status_code == 303 and response.headers["location"] == "/jobs", target


def test_bearer_token_opens_the_api(client: TestClient, seeded: dict[str, Job]) -> None:
    response = client.get("/api/jobs", headers={"Authorization": f"Bearer {TOKEN}"})
    assert response.status_code == 200 and response.json()["total"] == len(seeded)
    assert response.headers["cache-control"] == "no-store"


def test_pages_carry_a_strict_content_security_policy(logged_in: TestClient) -> None:
    response = logged_in.get("/jobs")
    policy = response.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "frame-ancestors 'none'" in policy
    assert response.headers["x-frame-options"] == "DENY"
    assert response.headers["cache-control"] == "no-store"


def test_a_session_expires(monkeypatch: pytest.MonkeyPatch, connection: redis.Redis) -> None:
    fresh = session_cookie(TOKEN, connection)
    long_ago = time.time() - SESSION_MAX_AGE_S - 5
    monkeypatch.setattr("itsdangerous.timed.time.time", lambda: long_ago)
    old = session_cookie(TOKEN, connection)
    monkeypatch.undo()
    assert valid_session(TOKEN, fresh, connection) and not valid_session(TOKEN, old, connection)
    assert not valid_session(TOKEN, fresh + "x", connection)
    assert not valid_session(TOKEN, None, connection)
