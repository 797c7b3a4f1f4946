"""The webhook receiver: signatures, malformed input, duplicates and what it ignores."""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path

import httpx
import pytest
import redis

from bot.observability.version import running_version
from bot.settings import Settings
from bot.web.app import create_app
from tests.bot.conftest import SECRET, World, served
from tests.kit.redis_server import free_port
from tests.kit.webhooks import deliver, make_event, sign


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
        assert client.get("/healthz").json() == {"status": "ok", "redis": "ok",
                                                 "version": running_version()}


def test_health_is_503_when_redis_is_down() -> None:
    dead = redis.Redis(host="127.0.0.1", port=free_port(), socket_connect_timeout=0.2)
    settings = Settings(app_id=1, private_key="unused", webhook_secret=SECRET)
    with served(create_app(settings, dead)) as url, httpx.Client(base_url=url) as client:
        response = client.get("/healthz")
    assert response.status_code == 503 and response.json()["status"] == "unhealthy"


def test_a_delivery_while_redis_is_down_is_503_queue_unavailable_with_retry_after() -> None:
    # The web app's own client (bot/plumbing/connections.py) on a port nobody listens on.
    settings = Settings(webhook_secret=SECRET,  # the web app needs no App key
                        redis_url=f"redis://127.0.0.1:{free_port()}/0", redis_connect_timeout_s=0.2)
    body = labeled_body()
    with served(create_app(settings)) as url, httpx.Client(base_url=url, timeout=9) as client:
        started = time.monotonic()
        response = deliver(client, "issues", body, secret=SECRET)
        answered_s = time.monotonic() - started
        metrics = client.get("/metrics")
    assert response.status_code == 503, response.text
    assert response.json()["error"] == "queue_unavailable"
    assert int(response.headers["Retry-After"]) > 0
    assert "Traceback" not in response.text
    assert answered_s < 3  # well within GitHub's 10 s
    # Counted in the web process (Redis, where the other counters live, is down) and scraped.
    assert metrics.status_code == 200
    assert "stepwise_redis_up 0.0" in metrics.text
    assert "stepwise_webhook_queue_unavailable_total 1.0" in metrics.text


def test_a_delivery_signed_with_the_previous_secret_is_accepted_during_rotation(
        tmp_path: Path, redis_url: str) -> None:
    settings = Settings(webhook_secret="new-secret", webhook_secret_previous="old-secret")
    connection = redis.Redis.from_url(redis_url)
    with served(create_app(settings, connection)) as url, httpx.Client(base_url=url) as client:
        old = deliver(client, "issues", labeled_body(), secret="old-secret")
        new = deliver(client, "issues", labeled_body(), secret="new-secret")
        other = deliver(client, "issues", labeled_body(), secret="another-secret")
    connection.close()
    assert old.status_code == 202 and new.status_code == 202
    assert other.status_code == 401


def test_openapi_schema_is_closed_with_the_task_center(world: World) -> None:
    """No dashboard token here: the task center is off, and so is the schema (issue 40)."""
    with httpx.Client(base_url=world.url, trust_env=False) as client:
        assert client.get("/openapi.json").status_code == 404
        assert client.get("/docs").status_code == 404


# --- content types, leniency, cheap no-ops, installations (issue 15) -----------------------------


def test_a_form_delivery_is_accepted_like_json(world: World) -> None:
    payload = make_event("issues.labeled", repo="octo-org/widgets", sender="maria")
    with httpx.Client(base_url=world.url, trust_env=False) as client:
        response = deliver(client, "issues", payload, secret=SECRET, form=True)
    assert response.status_code == 202 and response.json()["status"] == "queued"
    assert world.queued() == 1


def test_a_form_delivery_signed_over_the_json_alone_is_refused(world: World) -> None:
    payload = make_event("issues.labeled", repo="octo-org/widgets", sender="maria")
    json_bytes = json.dumps(payload).encode()
    with httpx.Client(base_url=world.url, trust_env=False) as client:
        response = deliver(client, "issues", payload, secret=SECRET, form=True,
                           signature=sign(SECRET, json_bytes))
    assert response.status_code == 401 and world.queued() == 0


@pytest.mark.parametrize("body", [b"payload=%7B", b"other=1", b"payload=1&payload=2", b"\xff=\xfe"])
def test_a_malformed_form_delivery_is_400(world: World, body: bytes) -> None:
    with httpx.Client(base_url=world.url, trust_env=False) as client:
        response = client.post("/webhooks/github", content=body, headers={
            "X-GitHub-Event": "issues", "X-GitHub-Delivery": str(uuid.uuid4()),
            "X-Hub-Signature-256": sign(SECRET, body),
            "Content-Type": "application/x-www-form-urlencoded"})
    assert response.status_code == 400 and response.json()["status"] == "malformed payload"


@pytest.mark.parametrize("drop", ["installation", "label", "issue.user"])
def test_what_the_schema_allows_to_be_missing_is_never_a_400(world: World, drop: str) -> None:
    payload = make_event("issues.labeled", repo="octo-org/widgets", sender="maria")
    if drop == "issue.user":
        payload["issue"]["user"] = None
    else:
        del payload[drop]
    response = world.post("issues", json.dumps(payload).encode())
    assert response.status_code == 202, response.text


def test_a_label_that_is_not_the_trigger_is_a_no_op_once_the_trigger_is_known(world: World) -> None:
    first = world.send("issues.labeled", issue_number=1, sender="maria", label="bug")
    assert first.json()["status"] == "queued"  # the repository's trigger label is not known yet
    world.work()  # the worker reads the config and remembers its trigger label
    again = world.send("issues.labeled", issue_number=1, sender="maria", label="bug")
    assert again.json() == {"status": "ignored", "reason": "label 'bug' is not the trigger"}
    assert world.queued() == 0
    assert world.send("issues.labeled", issue_number=1, sender="maria",
                      label="STEPWISE").json()["status"] == "queued"


def test_the_campaign_label_passes_the_filter_default_or_configured(world: World) -> None:
    world.send("issues.labeled", issue_number=1, sender="maria", label="bug")
    world.work()  # the trigger label is known now: other labels are no-ops
    assert world.send("issues.labeled", issue_number=1, sender="maria",
                      label="Stepwise-Campaign").json()["status"] == "queued"
    world.work()
    world.redis.set("stepwise:campaign-label:octo-org/widgets", "rollout")  # configured
    assert world.send("issues.labeled", issue_number=1, sender="maria",
                      label="rollout").json()["status"] == "queued"


def test_a_config_push_to_the_default_branch_forgets_the_trigger_label(world: World) -> None:
    world.send("issues.labeled", issue_number=1, sender="maria", label="bug")
    world.work()
    payload = make_event("push", repo="octo-org/widgets", ref="refs/heads/main", sender="maria")
    payload["repository"]["default_branch"] = "main"
    payload["commits"] = [{"id": "a" * 40, "added": [], "removed": [],
                           "modified": [".github/stepwise.yml"]}]
    # queued: the base of the repository's jobs moved (bot/server/handlers.py, on_push)
    assert world.post("push", json.dumps(payload).encode()).json()["status"] == "queued"
    assert world.send("issues.labeled", issue_number=1, sender="maria",
                      label="bug").json()["status"] == "queued"


def test_closes_that_cannot_concern_a_job_are_not_queued(world: World) -> None:
    closed_pr = world.send("pull_request.closed", pr_number=2, head_ref="feature/x", sender="maria")
    assert closed_pr.json() == {"status": "ignored",
                                "reason": "the pull request's branch is outside stepwise/"}
    no_job_pr = world.send("pull_request.closed", pr_number=2, head_ref="stepwise/issue-7",
                           sender="maria")
    assert no_job_pr.json() == {"status": "ignored", "reason": "no job on this pull request"}
    no_job = world.send("issues.closed", issue_number=7, sender="maria", labels=["bug"])
    assert no_job.json() == {"status": "ignored", "reason": "no job on this issue"}
    assert world.queued() == 0
    # A closed issue that carries the trigger label may have a job whose record was lost.
    assert world.send("issues.closed", issue_number=7, sender="maria",
                      labels=["Stepwise"]).json()["status"] == "queued"


@pytest.mark.parametrize(("pusher", "status"), [("stepwise[bot]", "ignored"),
                                                ("github-actions[bot]", "queued"),
                                                ("renovate[bot]", "queued"), ("maria", "queued")])
def test_only_the_apps_own_pushes_are_its_own(world: World, pusher: str, status: str) -> None:
    response = world.send("push", ref="refs/heads/stepwise/issue-1", sender=pusher,
                          sender_type="Bot" if pusher.endswith("[bot]") else "User")
    assert response.json()["status"] == status


def test_installation_events_are_recorded(world: World) -> None:
    payload = make_event("installation.created", repo="octo-org/widgets")
    response = world.post("installation", json.dumps(payload).encode())
    assert response.json()["status"] == "ignored" and world.queued() == 0
    record = world.redis.hgetall("stepwise:installation:1")
    assert record[b"account"] == b"octo-org" and record[b"action"] == b"installation.created"
    payload["action"] = "deleted"
    assert world.post("installation", json.dumps(payload).encode()).json()["status"] == "queued"
    assert world.redis.hget("stepwise:installation:1", "action") == b"installation.deleted"
