"""The webhook receiver: signatures, malformed input, duplicates and what it ignores."""

from __future__ import annotations

import json
import uuid

import httpx
import redis

from bot.settings import Settings
from bot.web.app import create_app
from tests.bot.conftest import SECRET, World, served
from tests.kit.redis_server import free_port
from tests.kit.webhooks import make_event, sign


def labeled_body() -> bytes:
    return json.dumps(make_event("issues.labeled", repo="octo-org/widgets")).encode()


def test_missing_signature_is_401_and_nothing_is_queued(world: World) -> None:
    response = world.post("issues", labeled_body(), unsigned=True)
    assert response.status_code == 401
    assert world.queued() == 0


def test_wrong_secret_is_401(world: World) -> None:
    response = world.post("issues", labeled_body(), secret="not-the-secret")
    assert response.status_code == 401
    assert world.queued() == 0


def test_sha1_signature_in_the_sha256_header_is_refused(world: World) -> None:
    body = labeled_body()
    response = world.post("issues", body, signature=sign(SECRET, body).replace("sha256", "sha1"))
    assert response.status_code == 401


def test_malformed_json_is_400(world: World) -> None:
    body = b'{"action": "labeled", '
    response = world.post("issues", body, signature=sign(SECRET, body))
    assert response.status_code == 400
    assert world.queued() == 0


def test_payload_without_the_fields_an_event_needs_is_400(world: World) -> None:
    body = json.dumps({"action": "labeled", "issue": {"number": 1}}).encode()
    response = world.post("issues", body, signature=sign(SECRET, body))
    assert response.status_code == 400
    assert "repository" in response.json()["problem"]


def test_unknown_event_is_acknowledged_and_ignored(world: World) -> None:
    body = json.dumps({"action": "created", "starred_at": None}).encode()
    response = world.post("star", body, signature=sign(SECRET, body))
    assert response.status_code == 202 and response.json()["status"] == "ignored"
    assert world.queued() == 0


def test_redelivered_delivery_starts_one_job(world: World) -> None:
    delivery = str(uuid.uuid4())
    first = world.send("issues.labeled", delivery_id=delivery, issue_number=1, sender="maria")
    second = world.send("issues.labeled", delivery_id=delivery, issue_number=1, sender="maria")
    assert first.json()["status"] == "queued" and second.json()["status"] == "duplicate"
    assert world.queued() == 1
    world.work()
    plans = [b for b in world.bodies(1) if "Plan for #1" in b]
    assert len(plans) == 1 and world.job().status.value == "awaiting_human"


def test_the_apps_own_comments_are_never_commands(world: World) -> None:
    response = world.send("issue_comment.created", issue_number=1,
                          comment_body="/stepwise approve", comment_user="stepwise[bot]",
                          comment_user_type="Bot", sender="stepwise[bot]", sender_type="Bot")
    assert response.json()["status"] == "ignored"
    assert world.queued() == 0


def test_comments_without_a_command_are_not_queued(world: World) -> None:
    response = world.send("issue_comment.created", issue_number=1, comment_body="LGTM!",
                          sender="maria", comment_user="maria")
    assert response.json()["status"] == "ignored"


def test_health_reports_redis(world: World) -> None:
    with httpx.Client(base_url=world.url, trust_env=False) as client:
        assert client.get("/healthz").json() == {"status": "ok", "redis": "ok"}


def test_health_is_503_when_redis_is_down() -> None:
    dead = redis.Redis(host="127.0.0.1", port=free_port(), socket_connect_timeout=0.2)
    settings = Settings(app_id=1, private_key="unused", webhook_secret=SECRET)
    with served(create_app(settings, dead)) as url, httpx.Client(base_url=url) as client:
        response = client.get("/healthz")
    assert response.status_code == 503 and response.json()["status"] == "unhealthy"


def test_openapi_schema_documents_the_routes(world: World) -> None:
    with httpx.Client(base_url=world.url, trust_env=False) as client:
        schema = client.get("/openapi.json").json()
    assert "/webhooks/github" in schema["paths"] and "/healthz" in schema["paths"]
