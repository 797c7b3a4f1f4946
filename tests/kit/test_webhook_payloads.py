"""The recorded webhook payloads, make_event's overrides, signatures and raw-byte delivery."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import githubkit.webhooks
import httpx
import pytest

from tests.kit.github import FakeGitHub
from tests.kit.webhooks import EVENT_NAMES, deliver, event_header, load, make_event, sign

SECRET = "It's a Secret to Everybody"
WANTED = {"issues.labeled", "issues.edited", "issues.closed", "issue_comment.created",
          "issue_comment.created.pull_request", "issue_comment.edited", "pull_request.closed",
          "pull_request.closed.merged", "push", "installation.created", "ping"}


def test_every_recorded_payload_passes_githubkits_strict_models() -> None:
    assert set(EVENT_NAMES) >= WANTED
    for name in EVENT_NAMES:
        githubkit.webhooks.parse_obj(event_header(name), load(name))  # type: ignore[arg-type]


def test_recorded_shapes() -> None:
    on_pr, on_issue = load("issue_comment.created.pull_request"), load("issue_comment.created")
    assert "pull_request" in on_pr["issue"] and "pull_request" not in on_issue["issue"]
    assert load("pull_request.closed.merged")["pull_request"]["merged"] is True
    assert load("pull_request.closed")["pull_request"]["merged"] is False
    labeled = load("issues.labeled")
    assert labeled["label"]["name"] == "stepwise" and labeled["installation"]["id"] == 1
    assert {"full_name", "clone_url", "default_branch", "owner"} <= set(labeled["repository"])


def test_make_event_fills_values_from_a_fake_repo(fake_github: FakeGitHub) -> None:
    repo = fake_github.add_repo("acme", "tools", {"a.py": "1\n"}, default_branch="trunk", private=True)
    payload = make_event("issue_comment.created", repo=repo, installation_id=7, issue_number=12,
                         issue_title="Tidy", comment_id=555, comment_body="/stepwise approve", sender="carol")
    assert payload["repository"]["full_name"] == "acme/tools"
    assert (payload["repository"]["clone_url"], payload["repository"]["default_branch"]) == (repo.clone_url,
                                                                                           "trunk")
    assert payload["repository"]["id"] == repo.id and payload["repository"]["private"] is True
    assert payload["installation"]["id"] == 7 and payload["issue"]["number"] == 12
    assert payload["issue"]["html_url"].endswith("/acme/tools/issues/12")
    assert payload["comment"]["issue_url"].endswith("/repos/acme/tools/issues/12")
    assert payload["comment"]["html_url"].endswith("/issues/12#issuecomment-555")
    assert (payload["comment"]["id"], payload["comment"]["body"]) == (555, "/stepwise approve")
    assert payload["comment"]["user"]["login"] == payload["sender"]["login"] == "carol"
    githubkit.webhooks.parse_obj("issue_comment", payload)
    with pytest.raises(TypeError):
        make_event("issues.labeled", colour="red")


def test_make_event_for_pull_requests_and_pushes() -> None:
    closed = make_event("pull_request.closed.merged", repo="acme/tools", pr_number=9,
                        head_ref="stepwise/issue-4", merged=False)
    pr = closed["pull_request"]
    assert (closed["number"], pr["number"], pr["merged"], pr["merged_at"]) == (9, 9, False, None)
    assert pr["head"]["ref"] == "stepwise/issue-4" and pr["head"]["label"] == "acme:stepwise/issue-4"
    assert pr["html_url"].endswith("/acme/tools/pull/9") and pr["base"]["repo"]["full_name"] == "acme/tools"
    githubkit.webhooks.parse_obj("pull_request", closed)
    push = make_event("push", ref="refs/heads/stepwise/issue-4", after="f" * 40)
    assert (push["ref"], push["after"]) == ("refs/heads/stepwise/issue-4", "f" * 40)
    labeled = make_event("issues.labeled", label="stepwise", labels=[], sender="bob", issue_user="mallory")
    assert [lab["name"] for lab in labeled["issue"]["labels"]] == ["stepwise"]
    assert labeled["issue"]["user"]["login"] == "mallory" and labeled["sender"]["login"] == "bob"


def test_sign_matches_githubkit_verify() -> None:
    body = b'{"zen": "Keep it logically awesome."}'
    signature = sign(SECRET, body)
    assert signature.startswith("sha256=") and githubkit.webhooks.verify(SECRET, body, signature)
    assert sign(SECRET, body) == "sha256=" + sign(SECRET.encode(), body).split("=", 1)[1]


class _Recorder(BaseHTTPRequestHandler):
    """Keeps each request's path, lower-cased headers and raw body on the server."""

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        headers = {k.lower(): v for k, v in self.headers.items()}
        self.server.got.append((self.path, headers, body))  # type: ignore[attr-defined]
        self.send_response(202)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        return


@pytest.fixture
def recorder() -> Iterator[tuple[str, list[tuple[str, dict[str, str], bytes]]]]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    server.got = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", server.got  # type: ignore[attr-defined]
    server.shutdown()
    server.server_close()


def test_deliver_posts_raw_signed_bytes_to_a_client(recorder: tuple[str, list[Any]]) -> None:
    url, got = recorder
    payload = make_event("issues.labeled")
    with httpx.Client(base_url=url, trust_env=False) as client:
        response = deliver(client, "issues.labeled", payload, secret=SECRET, delivery_id="d-1")
        deliver(client, "issues", payload, secret=SECRET, unsigned=True)
    assert response.status_code == 202
    (path, headers, raw), (_, unsigned_headers, _) = got
    assert path == "/webhooks/github" and json.loads(raw) == payload
    assert headers["x-github-event"] == "issues" and headers["x-github-delivery"] == "d-1"
    assert headers["content-type"] == "application/json"
    assert headers["x-hub-signature-256"] == sign(SECRET, raw)
    assert githubkit.webhooks.verify(SECRET, raw, headers["x-hub-signature-256"])
    assert "x-hub-signature-256" not in unsigned_headers


def test_deliver_to_a_base_url(recorder: tuple[str, list[Any]]) -> None:
    url, got = recorder
    raw = b'{"zen": "x"}'
    assert deliver(url, "ping", raw, secret=SECRET).status_code == 202
    assert deliver(url + "/other/path", "ping", raw, secret=SECRET, signature="sha256=bad").status_code == 202
    assert [(p, h["x-hub-signature-256"], b) for p, h, b in got] == [
        ("/webhooks/github", sign(SECRET, raw), raw), ("/other/path", "sha256=bad", raw)]
