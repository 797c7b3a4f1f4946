"""The fake GitHub's request plumbing: calls, replies, errors, the route table, authentication, paging."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urlencode

from tests.kit.github_model import FakeRepo, Token
from tests.kit.github_permissions import NOT_ACCESSIBLE, missing_permission
from tests.kit.github_render import Renderer
from tests.kit.github_state import GitHubState

DOCS = "https://docs.github.com/rest"
SUSPENDED = "This installation has been suspended"  # GitHub's 403 for a suspended installation
REPO = r"/repos/(?P<owner>[^/]+)/(?P<name>[^/]+)"


@dataclass
class Call:
    """One request as the routes see it: the path has the API prefix removed, headers are lower-case."""

    method: str
    path: str
    query: dict[str, str]
    body: Any
    headers: dict[str, str]
    state: GitHubState
    render: Renderer
    token: Token | None = None
    repo: FakeRepo | None = None
    params: dict[str, str] = field(default_factory=dict)

    @property
    def r(self) -> FakeRepo:
        assert self.repo is not None
        return self.repo

    @property
    def data(self) -> dict[str, Any]:
        return self.body if isinstance(self.body, dict) else {}

    def field(self, name: str, default: Any = None) -> Any:
        return self.data.get(name, default)


@dataclass
class Reply:
    status: int
    body: Any
    headers: dict[str, str] = field(default_factory=dict)


class ApiError(Exception):
    def __init__(self, status: int, message: str, errors: list[dict[str, Any]] | None = None, *,
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.errors = status, message, errors
        self.headers = dict(headers or {})

    def reply(self) -> Reply:
        body: dict[str, Any] = {"message": self.message, "documentation_url": DOCS,
                                "status": str(self.status)}
        if self.errors is not None:
            body["errors"] = self.errors
        return Reply(self.status, body, self.headers)


# GitHub's limits as GitHub counts them (kept apart from the product's jobs/basics/github_limits.py,
# so a wrong product constant is caught here).
BODY_MAX_CHARS = 65536  # issue, pull request and comment bodies: characters
TITLE_MAX_CHARS = 256  # issue and pull request titles
LABEL_MAX_CHARS = 50
CHECK_OUTPUT_MAX_BYTES = 65535  # check-run output title, summary, text: UTF-8 bytes
BLOB_MAX_BYTES = 100 * 1024 * 1024  # one file's content (blobs, tree entries, pushes): 100 MiB


def too_long(resource: str, field_name: str = "body", maximum: int = BODY_MAX_CHARS) -> ApiError:
    return ApiError(422, "Validation Failed", [{
        "resource": resource, "code": "custom", "field": field_name,
        "message": f"{field_name} is too long (maximum is {maximum} characters)",
    }])


def check_text_fields(call: Call, resource: str) -> None:
    """GitHub's 422 for a body or title over its limit (bodies and titles of issues, pull requests
    and comments, counted in characters)."""
    body, title = call.data.get("body"), call.data.get("title")
    if isinstance(body, str) and len(body) > BODY_MAX_CHARS:
        raise too_long(resource)
    if isinstance(title, str) and len(title) > TITLE_MAX_CHARS:
        raise too_long(resource, "title", TITLE_MAX_CHARS)


def invalid(message: str, *, field_name: str | None = None, code: str = "custom") -> ApiError:
    error: dict[str, Any] = {"resource": "PullRequest", "code": code, "message": message}
    if field_name:
        error["field"] = field_name
    return ApiError(422, "Validation Failed", [error])


Handler = Callable[[Call], Reply]
ROUTES: list[tuple[str, re.Pattern[str], str, Handler, str | None]] = []
JWT_ONLY = ""  # App endpoints: the JWT is the permission
UNDECLARED = "metadata=read"  # what a route that names no permission needs (tests list such routes)


def route(method: str, pattern: str, auth: str = "repo", *,
          permissions: str | None = None) -> Callable[[Handler], Handler]:
    """Register a handler; `auth` is 'jwt' (the App itself), 'token' (any installation token), 'repo'
    or 'public' (no credentials: a signed download link).

    `permissions` is what GitHub sends as X-Accepted-GitHub-Permissions for the endpoint
    ('issues=write; pull_requests=write': either set will do); a token without them gets GitHub's 403.
    """
    def register(handler: Handler) -> Handler:
        ROUTES.append((method, re.compile(pattern + "$"), auth, handler, permissions))
        return handler
    return register


def require(call: Call, permissions: str) -> None:
    """GitHub's 403 when the installation token lacks every accepted permission set."""
    if call.token is not None and permissions and missing_permission(call.token.permissions, permissions):
        raise ApiError(403, NOT_ACCESSIBLE, headers={"X-Accepted-GitHub-Permissions": permissions})


def bearer(call: Call) -> tuple[str, str] | None:
    header = call.headers.get("authorization", "")
    scheme, _, value = header.partition(" ")
    return (scheme.lower(), value.strip()) if value else None


def authenticate(call: Call, auth: str, jwt_check: Callable[[str], str | None]) -> None:
    if auth == "public":  # a signed download URL: the link is the credential
        return
    credentials = bearer(call)
    if auth == "jwt":
        problem = "A JSON web token could not be decoded"
        if credentials and credentials[0] == "bearer":
            problem = jwt_check(credentials[1]) or ""
        if problem:
            raise ApiError(401, problem)
        return
    token = None
    if credentials and credentials[0] in ("token", "bearer"):
        token = call.state.tokens.get(credentials[1])
    if token is None or token.expires_at <= call.state.clock():
        raise ApiError(401, "Bad credentials")
    if suspended(call.state, token.installation_id):
        raise ApiError(403, SUSPENDED)
    call.token = token
    if auth == "repo":
        full_name = f"{call.params['owner']}/{call.params['name']}"
        repo = call.state.repos.get(full_name)
        if repo is None or not can_access(call.state, token, repo):
            raise ApiError(404, "Not Found")
        call.repo = repo


def suspended(state: GitHubState, installation_id: int) -> bool:
    inst = state.installations.get(installation_id)
    return inst is not None and inst.suspended_at is not None


def can_access(state: GitHubState, token: Token, repo: FakeRepo) -> bool:
    inst = state.installations.get(token.installation_id)
    allowed = inst is not None and repo.full_name in inst.repos
    return allowed and (token.repositories is None or repo.name in token.repositories)


def dispatch(call: Call, *, jwt_check: Callable[[str], str | None]) -> Reply:
    if match := re.match(r"/repositories/(\d+)(/.*)?$", call.path):  # GitHub's Link headers use this form
        repo = next((r for r in call.state.repos.values() if r.id == int(match[1])), None)
        call.path = f"/repos/{repo.full_name if repo else '-/-'}{match[2] or ''}"
    known_path = False
    for method, pattern, auth, handler, permissions in ROUTES:
        if not (m := pattern.match(call.path)):
            continue
        known_path = True
        if method != call.method:
            continue
        call.params = {k: unquote(v) for k, v in m.groupdict().items()}
        try:
            needed = UNDECLARED if permissions is None else permissions
            authenticate(call, auth, jwt_check)
            require(call, needed)
            if call.token is not None:  # the installation's primary and secondary limits
                now = call.state.clock().timestamp()
                refused = call.state.rate_limits.admit(call.token.installation_id, call.method, now)
                if refused is not None:
                    raise ApiError(*refused, headers=call.state.rate_limits.headers(
                        call.token.installation_id, now))
        except ApiError as error:
            return error.reply()
        try:
            reply = handler(call)
        except ApiError as error:
            reply = error.reply()
        if needed:  # GitHub names the accepted permissions on every answer, not only on a 403
            reply.headers.setdefault("X-Accepted-GitHub-Permissions", needed)
        if call.token is not None:
            for key, value in call.state.rate_limits.headers(
                    call.token.installation_id, call.state.clock().timestamp()).items():
                reply.headers.setdefault(key, value)
        return reply
    if known_path:
        return ApiError(405, "Method Not Allowed").reply()
    return ApiError(404, "Not Found").reply()


def paginate(call: Call, items: list[Any], base_path: str) -> Reply:
    """GitHub-style page/per_page slicing with a Link header (next/last/first/prev) on /repositories/ID."""
    per_page = max(1, min(100, int(call.query.get("per_page", 30))))
    page = max(1, int(call.query.get("page", 1)))
    last = max(1, -(-len(items) // per_page))
    chunk = items[(page - 1) * per_page: page * per_page]
    extra = {k: v for k, v in call.query.items() if k not in ("page", "per_page")}

    def link(p: int, rel: str) -> str:
        query = urlencode({**extra, "per_page": per_page, "page": p})
        return f'<{call.render.api}{base_path}?{query}>; rel="{rel}"'

    links = []
    if page < last:
        links += [link(page + 1, "next"), link(last, "last")]
    if page > 1:
        links += [link(1, "first"), link(page - 1, "prev")]
    return Reply(200, chunk, {"Link": ", ".join(links)} if links else {})
