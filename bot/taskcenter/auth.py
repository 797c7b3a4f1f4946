"""Who may look: the task center is off unless STEPWISE_DASHBOARD_TOKEN is set; then the token,
typed once into the login form, sets a signed HTTP-only session cookie (or is sent as a Bearer
token to the API). Sessions live in Redis too (`session:<id>`): a cookie is only good while its
session is there, so logging out ends it for good, even for a copy of the cookie. Also the
dependencies the routes share (settings, store, links)."""

from __future__ import annotations

import contextlib
import hmac
import math
import secrets
from dataclasses import dataclass
from typing import Annotated, Literal
from urllib.parse import quote

import redis
from fastapi import Depends, HTTPException, Request, Response
from itsdangerous import BadSignature, URLSafeTimedSerializer

from bot.github.app import web_base
from bot.plumbing.keys import session_key
from bot.plumbing.redis_store import RedisStore
from bot.settings import Settings
from bot.taskcenter.links import Links
from bot.taskcenter.login_guard import LoginLimiter
from bot.taskcenter.records import HeadCache

COOKIE = "stepwise_session"
SESSION_MAX_AGE_S = 12 * 3600
SALT = "stepwise-task-center-session"
OFF_MESSAGE = "The task center is off: set STEPWISE_DASHBOARD_TOKEN to turn it on."
TOO_MANY_GUESSES = "Too many wrong tokens from this address: wait a minute, then try again."
LOGIN_NEEDED = "Log in with the dashboard token (or send it as `Authorization: Bearer <token>`)."


@dataclass(frozen=True)
class Viewer:
    """Someone who showed the dashboard token (by session cookie or Bearer header)."""

    via: Literal["session", "bearer"]


class TaskCenterOff(Exception):
    """No dashboard token is configured: nothing of the task center is served."""


class LoginRequired(Exception):
    """A page asked for without a valid session: the browser goes to the login form."""

    def __init__(self, next_path: str) -> None:
        super().__init__(next_path)
        self.next_path = next_path


def app_settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


SettingsDep = Annotated[Settings, Depends(app_settings)]


def dashboard_token(settings: Settings) -> str | None:
    token = settings.dashboard_token
    return token.get_secret_value() if token is not None and token.get_secret_value() else None


def serializer(token: str) -> URLSafeTimedSerializer:
    """Sessions are signed with a key derived from the token: changing it logs everyone out."""
    return URLSafeTimedSerializer(token, salt=SALT)


def session_cookie(token: str, connection: redis.Redis) -> str:
    """A new session, kept in Redis for SESSION_MAX_AGE_S, and its signed cookie."""
    session = secrets.token_urlsafe(24)
    connection.set(session_key(session), "1", ex=SESSION_MAX_AGE_S)
    return serializer(token).dumps({"v": 2, "sid": session})


def session_of(token: str, cookie: str | None) -> str | None:
    """The session id a cookie signed with `token` names (None: none, forged or expired)."""
    if not cookie:
        return None
    try:
        data = serializer(token).loads(cookie, max_age=SESSION_MAX_AGE_S)
    except BadSignature:  # also an expired one (SignatureExpired is a BadSignature)
        return None
    session = data.get("sid") if isinstance(data, dict) else None
    return session if isinstance(session, str) and session else None


def valid_session(token: str, cookie: str | None, connection: redis.Redis) -> bool:
    """A signed, unexpired cookie whose session is still in Redis (Redis down: no session)."""
    session = session_of(token, cookie)
    if session is None:
        return False
    try:
        return bool(connection.exists(session_key(session)))
    except redis.RedisError:
        return False


def end_session(token: str | None, cookie: str | None, connection: redis.Redis) -> None:
    session = session_of(token, cookie) if token else None
    if session is not None:
        with contextlib.suppress(redis.RedisError):
            connection.delete(session_key(session))


def token_matches(token: str, offered: str) -> bool:
    return hmac.compare_digest(token.encode(), offered.encode())


def client_of(request: Request) -> str:
    return request.client.host if request.client is not None else "?"


def viewer_of(request: Request, token: str) -> Viewer | None:
    """Who shows the token: a live session, or a Bearer header. A wrong Bearer token counts as
    a failed login of its client, and a client past its limit gets 429 whatever it offers."""
    if valid_session(token, request.cookies.get(COOKIE), request.app.state.redis):
        return Viewer("session")
    scheme, _, offered = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not offered.strip():
        # Sessions live in Redis: while it is away no login can succeed, so the answer is the
        # web app's 503 (its RedisError handler), not a login form that cannot work.
        request.app.state.redis.ping()
        return None
    limiter: LoginLimiter = request.app.state.login_limiter
    client = client_of(request)
    wait = limiter.blocked(client)
    if wait > 0:
        raise HTTPException(429, TOO_MANY_GUESSES, headers={"Retry-After": str(math.ceil(wait))})
    if token_matches(token, offered.strip()):
        return Viewer("bearer")
    limiter.failed(client)
    return None


def page_viewer(request: Request, settings: SettingsDep) -> Viewer:
    token = dashboard_token(settings)
    if token is None:
        raise TaskCenterOff
    viewer = viewer_of(request, token)
    if viewer is None:
        target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        raise LoginRequired(target)
    return viewer


def api_viewer(request: Request, response: Response, settings: SettingsDep) -> Viewer:
    response.headers["Cache-Control"] = "no-store"
    token = dashboard_token(settings)
    if token is None:
        raise HTTPException(404, OFF_MESSAGE)
    viewer = viewer_of(request, token)
    if viewer is None:
        raise HTTPException(401, LOGIN_NEEDED, headers={"WWW-Authenticate": 'Bearer realm="stepwise"'})
    return viewer


PageViewer = Annotated[Viewer, Depends(page_viewer)]
ApiViewer = Annotated[Viewer, Depends(api_viewer)]


def safe_next(target: str | None) -> str:
    """Only a path of this site (no `//host`, no scheme) is followed after logging in."""
    if not target or not target.startswith("/") or target.startswith(("//", "/\\")) \
            or any(c in target for c in "\r\n\\"):
        return "/jobs"
    return target


def login_url(next_path: str) -> str:
    return f"/login?next={quote(safe_next(next_path), safe='')}"


def secure_cookie(request: Request, settings: Settings) -> bool:
    return request.url.scheme == "https" or (settings.task_center_url or "").startswith("https://")


def job_store(request: Request) -> RedisStore:
    return RedisStore(request.app.state.redis)


def head_cache(request: Request) -> HeadCache:
    cache: HeadCache = request.app.state.head_cache
    return cache


def links(settings: SettingsDep) -> Links:
    return Links(web_base(settings.github_api_url), settings.task_center_url)


StoreDep = Annotated[RedisStore, Depends(job_store)]
CacheDep = Annotated[HeadCache, Depends(head_cache)]
LinksDep = Annotated[Links, Depends(links)]
