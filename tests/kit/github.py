"""A stateful fake GitHub (REST + one GraphQL mutation) served over real HTTP on loopback, for githubkit.

    with FakeGitHub() as gh:
        repo = gh.add_repo("o", "r", {"a.py": "x = 1\\n"}, config="trigger_label: stepwise\\n")
        number = gh.add_issue(repo, "Tidy", "body")
        client = gh.client()            # githubkit GitHub acting as installation 1
        ...
        assert gh.effects == ["o/r#1:comment-created:..."]

Records are plain dataclasses (github_model.py) held by GitHubState (github_state.py); endpoints are in
github_routes*.py and github_graphql.py, JSON shapes in github_render.py, error injection (`fail`,
`hold`, rate limits) in github_injection.py, the HTTP request handler in github_http.py. Pytest: import
the fixtures into a conftest.py (`from tests.kit.github import fake_github, fake_github_factory`), as
tests/kit/ does.
Keep a reference to the githubkit client you call: `gh.client().rest...` in one expression fails
("GitHub client has already been collected").
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlsplit

import pytest

from tests.kit import (
    github_routes,
    github_routes_actions,
    github_routes_app,
    github_routes_campaigns,
    github_routes_checks,
    github_routes_git,
    github_routes_orgs,
    github_routes_people,
    github_routes_pulls,
    github_routes_statuses,
)
from tests.kit.github_api import Call, Reply, dispatch
from tests.kit.github_auth import check_jwt, shared_app_key
from tests.kit.github_faults import Failure, Hold
from tests.kit.github_git_http import GIT_PATH, serve_git
from tests.kit.github_graphql import graphql
from tests.kit.github_http import RequestHandler
from tests.kit.github_injection import FaultInjection
from tests.kit.github_model import DEFAULT_INSTALLATION_ID, FakeRepo
from tests.kit.github_openapi import check_request, check_response
from tests.kit.github_permissions import GHES_VERSIONS, GITHUB_COM_VERSIONS, unsupported_version
from tests.kit.github_render import Renderer
from tests.kit.github_state import GitHubState

if TYPE_CHECKING:
    from githubkit import GitHub

# Every FakeGitHub made in this process, for the OpenAPI check at each test's teardown.
LIVE_FAKES: list[FakeGitHub] = []

# Importing them registers their routes.
ENDPOINT_MODULES = (github_routes, github_routes_app, github_routes_campaigns, github_routes_orgs,
                    github_routes_people, github_routes_pulls, github_routes_checks, github_routes_statuses,
                    github_routes_actions, github_routes_git)


@dataclass
class RecordedRequest:
    method: str
    path: str  # with the API prefix removed (same in github.com and GHES mode)
    query: dict[str, str]
    json: Any
    headers: dict[str, str]
    status: int = 0
    accepted_permissions: str = ""  # the answer's X-Accepted-GitHub-Permissions


class FakeGitHub(FaultInjection, GitHubState):
    """GitHub on 127.0.0.1:<free port>; `base_url` is what githubkit's `base_url=` takes."""

    def __init__(
        self,
        *,
        root: Path | None = None,
        enterprise: bool = False,
        git_http: bool = False,
        public_key: str | None = None,
        private_key: str | None = None,
        api_versions: Sequence[str] | None = None,
        **state_options: Any,
    ) -> None:
        super().__init__(root=root, **state_options)
        self.enterprise, self.git_http, self.public_key = enterprise, git_http, public_key
        # REST versions served: GHES mode (enterprise=True) serves only 2022-11-28, like GHES does.
        self.api_versions = tuple(api_versions or (GHES_VERSIONS if enterprise else GITHUB_COM_VERSIONS))
        self.requests: list[RecordedRequest] = []
        # Calls GitHub's API description does not allow (tests/kit/github_openapi.py); a test that
        # makes one fails at teardown (tests/conftest.py). A test that sends bad requests on purpose
        # sets `openapi_requests_checked = False` (they are still answered 422, as GitHub does).
        self.openapi_violations: list[str] = []
        self.openapi_requests_checked = True
        self.not_modified = 0  # conditional GETs answered 304
        LIVE_FAKES.append(self)
        self.failures: list[Failure] = []
        self.holds: list[Hold] = []
        self._chaos: tuple[float, tuple[int, ...], random.Random, re.Pattern[str]] | None = None
        self._private_key = private_key
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), RequestHandler)
        self._server.daemon_threads = True
        self._server.fake = self  # type: ignore[attr-defined]
        self._thread: threading.Thread | None = None
        self.web_url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self.api_prefix = "/api/v3" if enterprise else ""
        self.render = Renderer(self, api=self.web_url + self.api_prefix, web=self.web_url)

    # --- lifecycle --------------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        """The REST root for githubkit (GHES mode: .../api/v3, with GraphQL at /api/graphql)."""
        return self.web_url + self.api_prefix + "/"

    @property
    def noreply_domain(self) -> str:
        """Where the bot's commit address lives: `users.noreply.github.com`, on GitHub Enterprise
        Server `users.noreply.<its host>`."""
        host = self.web_url.split("://", 1)[1].split("/", 1)[0].split(":", 1)[0]
        return f"users.noreply.{host}" if self.enterprise else "users.noreply.github.com"

    def start(self) -> FakeGitHub:
        if self._thread is None:
            self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                            name="fake-github", daemon=True)
            self._thread.start()
        return self

    @property
    def running(self) -> bool:
        return self._thread is not None

    def stop(self) -> None:
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join(timeout=5)
            self._thread = None
        self._server.server_close()
        self.cleanup()

    def __enter__(self) -> FakeGitHub:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def clone_url_for(self, repo: FakeRepo) -> str:
        return f"{self.web_url}/{repo.full_name}.git" if self.git_http else str(repo.path)

    # --- App credentials and a ready githubkit client ---------------------------------------------

    @property
    def private_key_pem(self) -> str:
        """An App private key the fake trusts (one per process unless given; the fake verifies RS256)."""
        if self._private_key is None:
            if self.public_key is not None:
                raise ValueError("FakeGitHub(public_key=...) needs private_key=... for private_key_pem")
            self._private_key, self.public_key = shared_app_key()
        return self._private_key

    def client(self, installation_id: int | None = DEFAULT_INSTALLATION_ID, **options: Any) -> GitHub[Any]:
        """githubkit GitHub as the App (installation_id=None) or as an installation; no retries, no proxy."""
        from githubkit import AppAuthStrategy, GitHub
        from githubkit.cache import MemCacheStrategy

        # githubkit caches JWTs and tokens process-wide by app id + installation id (not by base_url):
        # a fresh cache keeps tokens minted by another FakeGitHub out of this one.
        options = {"auto_retry": False, "trust_env": False, "timeout": 10, "http_cache": False,
                   "cache_strategy": MemCacheStrategy(), **options}
        app = GitHub(AppAuthStrategy(self.app_id, self.private_key_pem), base_url=self.base_url, **options)
        return app.with_auth(app.auth.as_installation(installation_id)) if installation_id else app

    def _check_jwt(self, token: str) -> str | None:
        return check_jwt(token, app_id=self.app_id, public_key=self.public_key)

    # --- request handling (called by the HTTP handler thread) -------------------------------------

    def handle(self, method: str, target: str, headers: dict[str, str],
               body: bytes) -> tuple[int, dict[str, str], bytes]:
        parts = urlsplit(target)
        path, query = parts.path, dict(parse_qsl(parts.query))
        if self.git_http and GIT_PATH.match(path):
            with self.lock:
                return serve_git(self, method, path, parts.query, headers, body)
        graphql_path = "/api/graphql" if self.enterprise else "/graphql"
        is_graphql = path == graphql_path
        if not is_graphql and path.startswith(self.api_prefix):
            path = path[len(self.api_prefix):] or "/"
        else:
            path = "/graphql" if is_graphql else "/-" + path
        for held in self.holds:
            if held.method in ("*", method) and held.pattern.search(path) and \
                    all(query.get(k) == v for k, v in held.query.items()):
                held.hit.set()
                held.release.wait(timeout=60)
        try:
            payload = json.loads(body) if body else None
        except ValueError:
            return self._encode(Reply(400, {"message": "Problems parsing JSON"}))
        with self.lock:
            record = RecordedRequest(method, path, query, payload, headers)
            self.requests.append(record)
            reply = self._injected(method, path)
            problem = None if is_graphql else unsupported_version(headers, self.api_versions)
            if reply is None and problem:
                reply = Reply(400, {"message": problem, "documentation_url": "https://docs.github.com/rest",
                                    "status": "400"})
            checked = not is_graphql and reply is None
            if checked and (problems := check_request(self.enterprise, method, path, payload)):
                if self.openapi_requests_checked:
                    self.openapi_violations.extend(problems)
                reply = Reply(422, {"message": "Invalid request.\n\n" + "\n".join(problems),
                                    "documentation_url": "https://docs.github.com/rest"})
            if reply is None:
                call = Call(method, path, query, payload, headers, self, self.render)
                reply = graphql(call) if is_graphql else dispatch(call, jwt_check=self._check_jwt)
                reply = self._injected_after(method, path) or reply
                if checked and not isinstance(reply.body, bytes):
                    self.openapi_violations.extend(
                        check_response(self.enterprise, method, path, reply.status, reply.body))
            if method == "GET" and reply.status == 200 and not isinstance(reply.body, bytes):
                reply = self._conditional(reply, headers.get("if-none-match", ""))
            record.status = reply.status
            record.accepted_permissions = reply.headers.get("X-Accepted-GitHub-Permissions", "")
            return self._encode(reply)

    def _conditional(self, reply: Reply, if_none_match: str) -> Reply:
        """GitHub's ETag on a JSON answer, and `304 Not Modified` (an empty body, no rate limit
        spent) when the request named that ETag."""
        etag = 'W/"' + hashlib.sha256(json.dumps(reply.body, sort_keys=True).encode()).hexdigest()[:40] + '"'
        if etag in [tag.strip() for tag in if_none_match.split(",")]:
            self.not_modified += 1
            return Reply(304, b"", {"ETag": etag, **{k: v for k, v in reply.headers.items()
                                                     if k.lower() == "link"}})
        reply.headers.setdefault("ETag", etag)
        return reply

    def _encode(self, reply: Reply) -> tuple[int, dict[str, str], bytes]:
        raw = isinstance(reply.body, bytes)  # a log file, or a redirect's empty body
        data = reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body).encode()
        headers = {
            "Content-Type": "text/plain; charset=utf-8" if raw else "application/json; charset=utf-8",
            "X-GitHub-Request-Id": uuid.uuid4().hex[:16].upper(),
            "X-GitHub-Media-Type": "github.v3; format=json", "X-RateLimit-Limit": "5000",
            "X-RateLimit-Remaining": "4999", "X-RateLimit-Used": "1", "X-RateLimit-Resource": "core",
            "X-RateLimit-Reset": str(int(time.time()) + 3600), **reply.headers,
        }
        return reply.status, headers, data

    def requests_to(self, method: str, path_regex: str) -> list[RecordedRequest]:
        return [r for r in self.requests if r.method == method.upper() and re.search(path_regex, r.path)]


@pytest.fixture
def fake_github(tmp_path: Path) -> Iterator[FakeGitHub]:
    """A started FakeGitHub whose bare repositories live under tmp_path."""
    with FakeGitHub(root=tmp_path / "fake-github") as gh:
        yield gh


@pytest.fixture
def fake_github_factory(tmp_path: Path) -> Iterator[Any]:
    """Call with FakeGitHub options (enterprise=True, git_http=True, ...); all are stopped at teardown."""
    started: list[FakeGitHub] = []

    def make(**options: Any) -> FakeGitHub:
        gh = FakeGitHub(root=tmp_path / f"fake-github-{len(started)}", **options).start()
        started.append(gh)
        return gh

    yield make
    for gh in started:
        gh.stop()
