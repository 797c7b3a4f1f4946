"""The task center refuses weak dashboard tokens at start-up (naming the fix) and limits failed
logins: a guesser gets 429 with Retry-After, however many addresses it does not have."""

from __future__ import annotations

import pytest
import redis
from fastapi.testclient import TestClient

from bot.settings import SettingsError
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
