"""The task center refuses weak dashboard tokens at start-up (naming the fix) and limits failed
logins per client: a guesser gets 429 with Retry-After, its wrong Bearer tokens count as much as
its wrong logins, other clients are never locked out by it, and a logout ends the session on
the server (issue 40)."""

from __future__ import annotations

from typing import Any

import pytest
import redis
from fastapi.testclient import TestClient

from bot.settings import SettingsError
from bot.taskcenter.auth import COOKIE
from bot.taskcenter.login_guard import FAILURES_PER_CLIENT
from bot.web.app import create_app
from tests.bot.taskcenter.conftest import TOKEN, settings


@pytest.mark.parametrize("weak", ["hunter2", "dashboard-t0ken-for-the-tests", "a" * 64,
                                  "passwordpasswordpasswordpassword"])
def test_a_weak_token_stops_the_web_app_naming_the_fix(redis_url: str, weak: str) -> None:
    with pytest.raises(SettingsError) as caught:
        create_app(settings(redis_url, dashboard_token=weak), redis.Redis.from_url(redis_url))
    assert "STEPWISE_DASHBOARD_TOKEN" in caught.value.message
    assert "secrets.token_urlsafe" in (caught.value.hint or "")


def test_failed_logins_are_limited_then_even_the_right_token_waits(redis_url: str) -> None:
    app = create_app(settings(redis_url, dashboard_token=TOKEN), redis.Redis.from_url(redis_url))
    with TestClient(app, follow_redirects=False) as client:
        for guess in range(FAILURES_PER_CLIENT):
            assert client.post("/login", data={"token": f"guess-{guess}"}).status_code == 401
        refused = client.post("/login", data={"token": TOKEN})
        assert refused.status_code == 429 and int(refused.headers["Retry-After"]) > 0
        assert "Too many wrong tokens" in refused.text


def app_for(redis_url: str) -> Any:
    return create_app(settings(redis_url, dashboard_token=TOKEN), redis.Redis.from_url(redis_url))


def test_one_clients_guesses_lock_out_only_that_client(redis_url: str) -> None:
    """Issue 40: 30 wrong tokens from anyone locked everyone out; the limit is per client."""
    app = app_for(redis_url)
    with TestClient(app, follow_redirects=False, client=("198.51.100.7", 1)) as guesser:
        for guess in range(FAILURES_PER_CLIENT * 8):
            guesser.post("/login", data={"token": f"guess-{guess}"})
        assert guesser.post("/login", data={"token": TOKEN}).status_code == 429
    for n in range(3):  # others, one after the other, still log in at once
        with TestClient(app, follow_redirects=False, client=(f"203.0.113.{n}", 1)) as other:
            assert other.post("/login", data={"token": TOKEN}).status_code == 303


@pytest.mark.parametrize("where", ["/api/jobs", "/openapi.json", "/jobs"])
def test_bearer_guesses_are_counted_like_logins(redis_url: str, where: str) -> None:
    app = app_for(redis_url)
    with TestClient(app, follow_redirects=False, client=("198.51.100.8", 1)) as guesser:
        for guess in range(FAILURES_PER_CLIENT):
            wrong = guesser.get(where, headers={"Authorization": f"Bearer guess-{guess}"})
            assert wrong.status_code in (401, 303)
        refused = guesser.get(where, headers={"Authorization": f"Bearer {TOKEN}"})
        assert refused.status_code == 429 and int(refused.headers["Retry-After"]) > 0
        assert guesser.post("/login", data={"token": TOKEN}).status_code == 429


def test_logout_ends_the_session_for_every_copy_of_its_cookie(redis_url: str) -> None:
    app = app_for(redis_url)
    with TestClient(app, follow_redirects=False) as browser:
        assert browser.post("/login", data={"token": TOKEN}).status_code == 303
        stolen = browser.cookies.get(COOKIE)
        assert stolen and browser.get("/api/jobs").status_code == 200
        assert browser.post("/logout").status_code == 303
    with TestClient(app, follow_redirects=False, cookies={COOKIE: stolen}) as thief:
        assert thief.get("/api/jobs").status_code == 401
        assert thief.get("/jobs").status_code == 303  # to the login form
