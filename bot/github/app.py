"""The GitHub App itself: its JWT-authenticated client, the installation tokens it mints (cached
until shortly before they expire) and one githubkit client per token, made anew in a forked
RQ work horse; GitHub's web address; and who the App's commits are by (`BotIdentity`).

Every client shares one TLS context per process (`shared_tls_context`): githubkit opens an httpx
client for each request made outside `with github:` (the App's clients are shared between
threads, so they are never entered), and httpx builds a new SSL context for each client it is not
given one: loading the CA bundle again costs 30-60 ms of CPU per GitHub call, most of what a
worker spent on a step. The context is what httpx would build for these clients (certifi's
bundle; `trust_env=False`, as the clients are made), built once; an SSL context is safe to share
between threads and connections.
"""

from __future__ import annotations

import logging
import os
import ssl
import threading
import time
import weakref
from collections.abc import Callable
from datetime import UTC, datetime
from functools import cache
from typing import Any
from urllib.parse import urlsplit

import httpx
from githubkit import AppAuthStrategy, GitHub, TokenAuthStrategy
from githubkit.exception import RequestFailed

from bot.github.client import DEFAULT_API_VERSION, TOKEN_MARGIN_S, ApiVersion, Installation, response_json
from bot.github.conditional import ConditionalReads
from bot.github.errors import (
    NO_RETRY,
    CallRetry,
    ForgeError,
    classify,
    rate_limit_of_answer,
    retry_after_s,
)
from bot.github.limited import LimitedUntil
from bot.github.observer import CallObserver, ObservedRetry, event_hooks
from bot.github.write_budget import WritePacer, is_content_creating
from jobs.adapters.worktree import identity_env
from jobs.basics.errors import RetryClass

log = logging.getLogger(__name__)


@cache
def shared_tls_context() -> ssl.SSLContext:
    return httpx.create_ssl_context(verify=True, trust_env=False)


def web_base(api_url: str) -> str:
    """GitHub's web address from its API address (github.com, or GitHub Enterprise's host)."""
    parts = urlsplit(api_url)
    host = parts.netloc
    if host == "api.github.com":
        return "https://github.com"
    path = parts.path.rstrip("/")
    path = path.removesuffix("/api/v3")
    return f"{parts.scheme}://{host}{path}"


class GitHubApp:
    """App-level client: mints installation tokens (cached until shortly before expiry).

    `retry` (bot.github.errors.CallRetry) retries repeat-safe calls in place with a short capped
    backoff; without it (the default, for tests of single calls) every fault is raised at once.
    `observer` (bot/github/observer.py) is told about every answer and retry of every client
    made here (the metrics of GitHub calls and rate limits).
    """

    def __init__(self, *, app_id: int, private_key: str, base_url: str,
                 timeout: float = 30.0, auto_retry: bool = False,
                 clock: Callable[[], float] = time.time, retry: CallRetry | None = None,
                 sleep: Callable[[float], None] = time.sleep,
                 api_version: ApiVersion = DEFAULT_API_VERSION,
                 observer: CallObserver | None = None,
                 budget: WritePacer | None = None,
                 limited: LimitedUntil | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.api_version: ApiVersion = api_version
        self.team_answers: dict[tuple[int, str, str, str], tuple[bool, float]] = {}
        self.timeout = timeout
        self.retry = retry or NO_RETRY
        self.observer = observer
        self.budget = budget  # each installation's content-creating writes take a slot first
        self.limited = limited  # a rate limit GitHub answered stops every path until it is over
        self.auto_retry: bool | CallRetry | ObservedRetry = retry if retry is not None else \
            auto_retry
        if observer is not None and (retry is not None or auto_retry is False):
            self.auto_retry = ObservedRetry(retry or NO_RETRY, observer)
        self.clock, self.sleep = clock, sleep
        self._auth = (app_id, private_key)
        self._app = self._client(AppAuthStrategy(app_id, private_key), "app")
        self.conditional = ConditionalReads()  # ETags of polled reads (bounded; no hishel cache)
        self._tokens: dict[int, tuple[str, float]] = {}
        self._clients: dict[int, tuple[str, GitHub[TokenAuthStrategy]]] = {}
        self._lock = threading.Lock()
        self.app_id = app_id  # tells Stepwise's own check runs from every other App's (by app.id)
        _after_fork.add(self)

    def _client(self, auth: Any, acting_as: str) -> GitHub[Any]:
        """A githubkit client: `acting_as` is "app" or the installation id it calls as."""
        hooks = event_hooks(self.observer, acting_as) or {}
        if acting_as != "app" and (self.budget is not None or self.limited is not None):
            hooks["request"] = [pacing_hook(self.budget, self.limited, acting_as)]
        if acting_as != "app" and self.limited is not None:
            hooks["response"] = [*hooks.get("response", []),
                                 limit_hook(self.limited, acting_as)]
        return GitHub(auth, base_url=self.base_url, timeout=self.timeout,
                      auto_retry=self.auto_retry, trust_env=False,
                      ssl_verify=shared_tls_context(), http_cache=False,
                      event_hooks=hooks or None)

    def reset_after_fork(self) -> None:
        """In a forked child (an RQ work horse): new locks and clients, since another thread
        of the parent may have held them mid-call at the moment of the fork."""
        self._lock = threading.Lock()
        self._clients = {}
        self._app = self._client(AppAuthStrategy(*self._auth), "app")

    def token(self, installation_id: int) -> str:
        with self._lock:
            cached = self._tokens.get(installation_id)
            if cached and cached[1] - TOKEN_MARGIN_S > self.clock():
                return cached[0]
            try:
                data = response_json(self.rest(self._app).apps.create_installation_access_token(
                    installation_id))
            except RequestFailed as exc:
                limited = retry_after_s(exc) > 0 or "rate limit" in exc.response.text.lower()
                if exc.response.status_code in (401, 403, 404) and not limited:
                    raise ForgeError(
                        f"installation {installation_id} is gone or suspended",
                        code="installation_removed", retry_class=RetryClass.DO_NOT_RETRY,
                        hint="install the App on the repository again") from None
                raise classify(exc) from None
            except Exception as exc:
                raise classify(exc) from None
            expires_at = _utc_timestamp(data["expires_at"])
            self._tokens[installation_id] = (data["token"], expires_at)
            return str(data["token"])

    def forget_token(self, installation_id: int) -> None:
        with self._lock:
            self._tokens.pop(installation_id, None)
            self._clients.pop(installation_id, None)

    def installation_client(self, installation_id: int) -> GitHub[TokenAuthStrategy]:
        """One client per installation token, reused: a new client costs a TLS context and
        loses keep-alive (tens of milliseconds of CPU each)."""
        token = self.token(installation_id)
        with self._lock:
            cached = self._clients.get(installation_id)
            if cached is not None and cached[0] == token:
                return cached[1]
            client = self._client(TokenAuthStrategy(token), str(installation_id))
            self._clients[installation_id] = (token, client)
            return client

    def installation_id(self, owner: str, name: str) -> int:
        try:
            return int(response_json(self.rest(self._app).apps.get_repo_installation(owner, name))["id"])
        except Exception as exc:
            raise classify(exc) from None

    def installation(self, installation_id: int) -> dict[str, Any] | None:
        """The installation as GitHub has it now (asked as the App); None when GitHub no longer
        has it (uninstalled)."""
        return self._app_read(lambda rest: rest.apps.get_installation(installation_id))

    def repository_installation(self, owner: str, name: str) -> int | None:
        """The id of the installation that covers the repository now; None when none does."""
        data = self._app_read(lambda rest: rest.apps.get_repo_installation(owner, name))
        return None if data is None else int(data["id"])

    def _app_read(self, call: Callable[[Any], Any]) -> dict[str, Any] | None:
        try:
            return dict(response_json(call(self.rest(self._app))))
        except RequestFailed as exc:
            if exc.response.status_code == 404:
                return None
            raise classify(exc) from None
        except Exception as exc:
            raise classify(exc) from None

    def client(self, installation_id: int) -> Installation:
        return Installation(self, installation_id)

    def rest(self, gh: GitHub[Any]) -> Any:
        """The REST namespace of the configured API version: every call sends its
        X-GitHub-Api-Version (githubkit's default is its newest schema, which GHES refuses)."""
        return gh.rest(self.api_version)


_after_fork: weakref.WeakSet[GitHubApp] = weakref.WeakSet()


def _reset_apps_after_fork() -> None:
    for app in list(_after_fork):
        app.reset_after_fork()


os.register_at_fork(after_in_child=_reset_apps_after_fork)


def _utc_timestamp(text: str) -> float:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC).timestamp()


# -- who the App's commits are by --------------------------------------------------------------------
# Its bot user, `<slug>[bot] <<id>+<slug>[bot]@users.noreply.<host>>`, as GitHub shows the App's
# own web edits (the host is github.com, or the GitHub Enterprise Server's web host). The bot
# user's id is read once from `GET /users/<slug>[bot]` and kept for the life of the process.
def pacing_hook(budget: WritePacer | None, limited: LimitedUntil | None,
                installation: str) -> Callable[[httpx.Request], None]:
    """An httpx request hook: nothing is sent while GitHub limits the installation (LimitedWait),
    and a content-creating request takes a slot of its write budget first (WriteBudgetWait when
    spent): either re-queues the step for later, the request unsent."""
    def hook(request: httpx.Request) -> None:
        if limited is not None:
            limited.check(installation)
        if budget is not None and is_content_creating(request.method, request.url.path):
            budget.spend(installation)
    return hook


def limit_hook(limited: LimitedUntil, installation: str) -> Callable[[httpx.Response], None]:
    """An httpx response hook: a rate limit GitHub answered is recorded for every worker."""
    def hook(response: httpx.Response) -> None:
        if response.status_code not in (403, 429):
            return
        response.read()
        found = rate_limit_of_answer(response.status_code, response.headers, response.text,
                                     now=limited.clock())
        if found is not None:
            limited.limit(installation, *found)
    return hook


def noreply_host(api_url: str) -> str:
    """github.com, or a GitHub Enterprise Server's web host (its API is `https://HOST/api/v3`)."""
    if not urlsplit(api_url).path.rstrip("/").endswith("/api/v3"):
        return "github.com"
    return urlsplit(web_base(api_url)).hostname or "github.com"


class BotIdentity:
    """The App's commit identity, its bot user's id asked for once."""

    def __init__(self, *, app_slug: str, api_url: str) -> None:
        self.login = f"{app_slug}[bot]"
        self.host = noreply_host(api_url)
        self._env: dict[str, str] | None = None
        self._lock = threading.Lock()

    def email(self, user_id: int) -> str:
        """The bot user's noreply address (without an id when GitHub did not give one)."""
        local = f"{user_id}+{self.login}" if user_id else self.login
        return f"{local}@users.noreply.{self.host}"

    def env(self, client: Installation) -> dict[str, str]:
        """The git environment of the App's identity; the id is read once, then kept (a failed
        read is tried again on the next commit, meanwhile the address carries no id)."""
        with self._lock:
            if self._env is not None:
                return dict(self._env)
            try:
                user_id = client.user_id(self.login)
            except ForgeError as exc:
                log.warning("could not read the bot user's id", extra={"code": exc.code})
                return identity_env(self.login, self.email(0))
            env = identity_env(self.login, self.email(user_id))
            if user_id:
                self._env = env
            return dict(env)
