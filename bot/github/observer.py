"""What every GitHub call tells an operator, taken at the githubkit client (part of the GitHub
adapter): bot/github/app.py gives each client it makes an httpx response hook (`response_hook`)
and wraps its retry decision (`ObservedRetry`), so every call, retried or not, is seen in one
place and no call site counts anything.

An observer (bot.observability.github_metrics.GitHubCallMetrics keeps the counts in Redis) gets:
each answer (method, route template, status, and the installation's rate-limit headers) and each
retry in place. Route templates keep label values bounded: `route_template` keeps GitHub's own
path words and replaces everything else (owners, names, numbers, shas, branches, file paths)
by a placeholder.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import httpx
from githubkit.exception import GitHubException, RequestFailed
from githubkit.retry import RetryOption

from bot.github.errors import rate_limit_of_answer

log = logging.getLogger(__name__)
# GitHub's REST path words (anything else in a path is a value: a placeholder takes its place).
PATH_WORDS = frozenset({"access_tokens", "actions", "annotations", "app", "assignees", "blobs",
    "branches", "check-runs", "check-suites", "code", "collaborators", "comments", "commits",
    "compare", "contents", "deployments", "enforce_admins", "environments", "events", "forks",
    "git", "graphql", "hooks", "installation", "installations", "issues", "jobs", "labels",
    "logs", "matching-refs", "members", "memberships", "merge", "merges", "milestones", "orgs",
    "permission", "protection", "pulls", "rate_limit", "reactions", "readme", "ref", "refs",
    "releases", "repos", "repositories", "requested_reviewers", "required_pull_request_reviews",
    "required_signatures", "required_status_checks", "rerequest", "rerun", "rerun-failed-jobs",
    "restrictions", "rules", "runs", "search", "status", "statuses", "tags", "teams", "timeline",
    "trees", "user", "users", "workflows"})
REST_OF_PATH = {"contents": "{path}", "refs": "{ref}", "ref": "{ref}", "matching-refs": "{ref}"}
BRANCH_ENDS = frozenset({"protection", "rename"})  # what may follow a branch name
SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
MAX_SEGMENTS = 10


def route_template(path: str) -> str:
    """`/repos/octo/widgets/issues/7/comments` -> `/repos/{owner}/{repo}/issues/{number}/comments`:
    the path's shape, with no value of the caller's in it (bounded label values)."""
    path = path.split("?", 1)[0]
    if path.startswith("/api/v3/"):  # GitHub Enterprise Server
        path = path[len("/api/v3"):]
    elif path == "/api/graphql":
        return "/graphql"
    parts = [part for part in path.split("/") if part]
    shape: list[str] = []
    index = 0
    while index < len(parts) and len(shape) < MAX_SEGMENTS:
        part, before = parts[index], shape[-1] if shape else ""
        if before in ("repos", "users", "orgs") and before not in shape[:-1]:
            if before == "repos":
                shape += ["{owner}", "{repo}"]
                index += 2
            else:
                shape.append("{org}" if before == "orgs" else "{username}")
                index += 1
            continue
        if before in REST_OF_PATH and part not in PATH_WORDS:
            shape.append(REST_OF_PATH[before])
            break
        if before == "branches":
            shape.append("{branch}")  # a branch name may hold slashes: up to what follows one
            index += 1
            while index < len(parts) and parts[index] not in BRANCH_ENDS:
                index += 1
            continue
        if part in PATH_WORDS:
            shape.append(part)
        elif part.isdigit():
            shape.append("{number}" if before in ("issues", "pulls") else "{id}")
        elif SHA.fullmatch(part):
            shape.append("{sha}")
        else:
            shape.append("{name}")
        index += 1
    return "/" + "/".join(shape)


NO_ANSWER = 0  # the status of a call that got no answer (a timeout, a lost connection)


def status_class(status: int) -> str:
    if status == NO_ANSWER:
        return "error"
    return f"{status // 100}xx" if 100 <= status < 600 else "other"


@dataclass(frozen=True)
class RateLimit:
    """One answer's `x-ratelimit-*` headers."""

    resource: str
    limit: int
    remaining: int
    reset: int  # epoch seconds


def rate_limit_headers(headers: httpx.Headers) -> RateLimit | None:
    try:
        return RateLimit(resource=headers.get("x-ratelimit-resource", "core")[:40],
                         limit=int(headers["x-ratelimit-limit"]),
                         remaining=int(headers["x-ratelimit-remaining"]),
                         reset=int(headers["x-ratelimit-reset"]))
    except (KeyError, ValueError):
        return None


@dataclass(frozen=True)
class Answer:
    """One GitHub answer, as an observer sees it."""

    installation: str  # the installation id, or "app" for the App's own (JWT) calls
    method: str
    route: str
    status: int
    rate_limit: RateLimit | None
    limited: str | None  # "primary" or "secondary" when GitHub refused it for a rate limit


class CallObserver(Protocol):
    def answered(self, answer: Answer) -> None: ...

    def retried(self, method: str, route: str) -> None: ...


def response_hook(observer: CallObserver, installation: str) -> Callable[[httpx.Response], None]:
    """An httpx response hook that tells `observer` about every answer of one client."""
    def hook(response: httpx.Response) -> None:
        try:
            observer.answered(answer_of(response, installation))
        except Exception:  # counting must never fail a call
            log.warning("a GitHub call was not counted", exc_info=True)
    return hook


def answer_of(response: httpx.Response, installation: str) -> Answer:
    request = response.request
    limited = None
    if response.status_code in (403, 429):
        response.read()  # the body says whether it is a rate limit (githubkit reads it anyway)
        found = rate_limit_of_answer(response.status_code, response.headers, response.text,
                                     now=time.time())
        limited = found[0] if found is not None else None
    return Answer(installation=installation, method=request.method,
                  route=route_template(request.url.path), status=response.status_code,
                  rate_limit=rate_limit_headers(response.headers), limited=limited)


def event_hooks(observer: CallObserver | None, installation: str) -> dict[str, list[Any]] | None:
    """githubkit's `event_hooks` for a client acting as `installation` (None: no observer)."""
    return None if observer is None else {"response": [response_hook(observer, installation)]}


@dataclass(frozen=True)
class ObservedRetry:
    """githubkit's `auto_retry` decision (`decide`, e.g. bot.github.errors.CallRetry), telling the
    observer about each retry it grants and each try that got no answer at all (githubkit asks
    this decision about every failed try; a response hook sees only the answered ones)."""

    decide: Callable[[GitHubException, int], RetryOption]
    observer: CallObserver

    def __call__(self, exc: GitHubException, count: int) -> RetryOption:
        option = self.decide(exc, count)
        request = getattr(exc, "request", None) or getattr(getattr(exc, "exc", None),
                                                           "request", None)
        if request is None:
            return option
        method, route = str(request.method), route_template(request.url.path)
        try:
            if not isinstance(exc, RequestFailed):  # no answer (a timeout, a lost connection)
                self.observer.answered(Answer(installation="", method=method, route=route,
                                              status=NO_ANSWER, rate_limit=None, limited=None))
            if option.do_retry:
                self.observer.retried(method, route)
        except Exception:  # counting must never fail a call
            log.warning("a GitHub call was not counted", exc_info=True)
        return option
