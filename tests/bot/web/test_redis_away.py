"""With Redis away (nothing listens on its port), the task center and its API answer 503 with
Retry-After and say why, never 500 with a traceback."""

from __future__ import annotations

import redis
from fastapi.testclient import TestClient

from bot.web.app import create_app
from tests.bot.taskcenter.conftest import TOKEN, settings
from tests.kit.redis_server import free_port


def test_the_task_center_answers_503_while_redis_is_away() -> None:
    url = f"redis://127.0.0.1:{free_port()}/0"  # nobody listens there
    away = redis.Redis.from_url(url, socket_connect_timeout=0.5, socket_timeout=0.5)
    with TestClient(create_app(settings(url), away), follow_redirects=False,
                    raise_server_exceptions=False) as client:
        login = client.post("/login", data={"token": TOKEN, "next": "/jobs"})
        assert login.status_code in (303, 503), login.text
        for path in ("/jobs", "/api/jobs", "/metrics"):
            response = client.get(path)
            if path == "/metrics":  # Prometheus still scrapes the process's own metrics
                assert response.status_code == 200 and "stepwise_redis_up 0.0" in response.text
                continue
            assert response.status_code == 503, (path, response.status_code, response.text)
            assert response.headers["Retry-After"] == "30"
            assert response.json()["error"] == "redis_unavailable"
