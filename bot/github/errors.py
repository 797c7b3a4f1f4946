"""How a failed GitHub call is reported and retried (part of the GitHub adapter).

Reported: `ForgeError`, and `classify` turning any githubkit failure into one (transient, needing
a human, or never to be retried, without URLs carrying credentials). A 4xx that will not change
by asking again (422: GitHub found the request invalid; 404 and 410: the thing is gone or hidden
from the App; 403 that is not a rate limit: a permission is missing) is `do_not_retry`: the step
does not back off, and the reconciler does not publish it again (bot/github/forge.py keeps it as
refused, shown on the card and in the task center).

Retried in place: which calls are safe to repeat, which faults are worth a short wait, and the
capped backoff githubkit runs them with (`CallRetry`). A call is retried here, at the call, when
repeating it cannot make a duplicate: reads, edits (PATCH, PUT, DELETE) and the few POSTs GitHub
treats as idempotent (a reaction that exists is answered 200, adding labels is a union, a token
mint only mints another, marking a pull request ready twice is harmless). Creating a comment or
a pull request is not repeated blindly: the adapter looks for what the first try may have made
(its marker, its head branch) first. Only short waits are spent in place (each at most
`max_wait_s`, GitHub's `Retry-After` honoured); a fault that outlasts them goes up to the step,
whose own backoff (5/15/45 s) takes over.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import httpx
from githubkit.exception import (
    GitHubException,
    RateLimitExceeded,
    RequestError,
    RequestFailed,
)
from githubkit.retry import RetryOption

from jobs.basics.errors import PlatformWait, RetryClass, StepwiseError

log = logging.getLogger(__name__)

CALL_BACKOFF_S = (0.5, 1.0, 2.0)  # waits before the second, third and fourth try of one call
SECONDARY_MIN_WAIT_S = 60.0  # GitHub: after a secondary limit without Retry-After, wait at least a minute
MAX_CALL_WAIT_S = 10.0  # a longer Retry-After is left to the step's backoff
REPEATABLE_METHODS = frozenset({"GET", "HEAD", "PUT", "PATCH", "DELETE"})
# POSTs that change nothing when repeated (paths without the GHES /api/v3 prefix).
REPEATABLE_POSTS = (
    re.compile(r"/app/installations/\d+/access_tokens$"),  # another token; the old one stays valid
    re.compile(r"/reactions$"),  # an existing reaction is answered 200, not added again
    re.compile(r"/issues/\d+/labels$"),  # adding labels is a set union
    re.compile(r"/graphql$"),  # the adapter's only mutation marks a pull request ready
)


def transient_status(status: int, text: str) -> bool:
    """GitHub's trouble rather than ours: 5xx, 429, and a 403 that is a rate limit."""
    return status >= 500 or status == 429 or (status == 403 and "rate limit" in text.lower())


def repeatable(method: str, path: str) -> bool:
    """Whether sending this request again can never duplicate what the first one did."""
    method = method.upper()
    if method in REPEATABLE_METHODS:
        return True
    return method == "POST" and any(rule.search(path) for rule in REPEATABLE_POSTS)


def retry_after_s(exc: RequestFailed) -> float:
    """Seconds GitHub asked us to wait (rate limits, Retry-After), or 0."""
    if isinstance(exc, RateLimitExceeded):
        return exc.retry_after.total_seconds()
    header = exc.response.headers.get("retry-after", "")
    return float(header) if header.isdigit() else 0.0


def rate_limit(exc: BaseException, *, now: float) -> tuple[str, float | None] | None:
    """Whether `exc` is one of GitHub's rate limits: ("primary" | "secondary", the seconds GitHub
    asked to wait, or None where it did not say), else None (`rate_limit_of_answer`)."""
    if not isinstance(exc, RequestFailed):
        return None
    return rate_limit_of_answer(exc.response.status_code, exc.response.headers,
                                exc.response.text, now=now)


def rate_limit_of_answer(status: int, headers: Mapping[str, str], text: str, *,
                         now: float) -> tuple[str, float | None] | None:
    """Whether an answer is one of GitHub's rate limits, as `rate_limit` says. A primary limit
    says when it resets (`x-ratelimit-remaining: 0`, `x-ratelimit-reset`), on a 403 or a 429:
    read first, so such an answer waits for the reset rather than a secondary limit's minutes.
    Secondary ones may send `Retry-After`."""
    if status not in (403, 429):
        return None
    text = text.lower()
    reset = headers.get("x-ratelimit-reset", "")
    if headers.get("x-ratelimit-remaining") == "0" and reset.isdigit():
        return "primary", max(0.0, float(reset) - now)
    after = headers.get("retry-after", "")
    if after.isdigit():
        return "secondary", float(after)
    if "secondary rate limit" in text or status == 429:
        return "secondary", None
    return ("secondary", None) if "rate limit" in text else None


def is_transient(exc: BaseException) -> bool:
    """A githubkit failure worth trying again: GitHub's trouble, a timeout or a lost connection."""
    if isinstance(exc, RequestFailed):
        return transient_status(exc.response.status_code, exc.response.text)
    return isinstance(exc, RequestError) and not isinstance(exc.exc, StepwiseError)


def _method_and_path(exc: GitHubException) -> tuple[str, str] | None:
    request = getattr(exc, "request", None)
    if request is None and isinstance(exc, RequestError):
        request = getattr(exc.exc, "request", None)
    if request is None:
        return None
    return str(request.method), str(request.url.path)


@dataclass(frozen=True)
class CallRetry:
    """githubkit's `auto_retry` decision: `(exc, retries so far) -> RetryOption`.

    Retries a repeat-safe request that met a transient fault after `backoff_s[n]` seconds (or
    GitHub's Retry-After when longer), never waiting more than `max_wait_s` at once.
    """

    backoff_s: Sequence[float] = CALL_BACKOFF_S
    max_wait_s: float = MAX_CALL_WAIT_S

    def wait_s(self, exc: BaseException, count: int) -> float | None:
        """How long to wait before try `count + 2`, or None when not to retry in place."""
        if count >= len(self.backoff_s) or not is_transient(exc):
            return None
        limited = rate_limit(exc, now=time.time())
        if limited is not None:  # at least what GitHub asks; a minute where it does not say
            asked = limited[1] if limited[1] is not None else SECONDARY_MIN_WAIT_S
        else:
            asked = retry_after_s(exc) if isinstance(exc, RequestFailed) else 0.0
        wait = max(float(self.backoff_s[count]), asked)
        return wait if wait <= self.max_wait_s else None

    def __call__(self, exc: GitHubException, count: int) -> RetryOption:
        where = _method_and_path(exc)
        if where is None or not repeatable(*where):
            return RetryOption(False)
        wait = self.wait_s(exc, count)
        if wait is None:
            return RetryOption(False)
        log.info("GitHub call retried in place", extra={
            "method": where[0], "path": where[1], "try": count + 2, "delay_s": wait})
        return RetryOption(True, timedelta(seconds=wait))


NO_RETRY = CallRetry(backoff_s=())


RATE_LIMITED = "github_rate_limited"
SUSPENDED = "installation_suspended"  # GitHub's 403 "This installation has been suspended"
SUSPENDED_WORDS = "installation has been suspended"
REFUSED_STATUSES = frozenset({403, 404, 410, 422})  # what asking again will not change
HINTS = {
    403: "the App lacks one of the permissions this needs{permissions}; an owner can grant it in "
         "the App's installation settings",
    404: "it was deleted, or the App cannot see it (is the App still installed on the repository?)",
    410: "GitHub says it is gone for good",
    422: "GitHub found the request invalid; asking again will not change that",
}


class ForgeError(StepwiseError):
    """A GitHub call failed; the retry class says whether to back off or stop."""

    code = "github_error"


class ForgeWait(ForgeError, PlatformWait):
    """GitHub asks the job to wait: a rate limit, or a suspended installation."""


def validation_errors(body: Any) -> list[dict[str, str]]:
    """GitHub's structured 422 details (`errors`: resource, field, code, message), as strings."""
    errors = body.get("errors") if isinstance(body, dict) else None
    found = []
    for item in errors if isinstance(errors, list) else []:
        if isinstance(item, dict):
            found.append({k: str(item[k]) for k in ("resource", "field", "code", "message") if k in item})
        elif isinstance(item, str):
            found.append({"message": item})
    return found


def response_body(exc: RequestFailed) -> Any:
    try:
        return json.loads(exc.response.text)
    except ValueError:
        return None


def classify(exc: Exception) -> ForgeError:
    """One ForgeError for any githubkit failure, without URLs carrying credentials."""
    if isinstance(exc, ForgeError):
        return exc  # already classified (e.g. by the token mint inside another call)
    if isinstance(exc, RequestFailed):
        status = exc.response.status_code
        transient = transient_status(status, exc.response.text)
        wait = retry_after_s(exc)
        evidence: dict[str, Any] = {"status": status, **({"retry_after": wait} if wait else {})}
        message = f"GitHub answered {status} to {exc.request.method} {exc.request.url.path}"
        limited = rate_limit(exc, now=time.time())
        if limited is not None:
            kind, asked = limited
            evidence.update(rate_limit=kind, retry_after=asked if asked is not None else
                            SECONDARY_MIN_WAIT_S, asked=asked is not None)
            return ForgeWait(f"GitHub's {kind} rate limit: {message}", code=RATE_LIMITED,
                              retry_class=RetryClass.AUTO_RETRY, evidence=evidence,
                              hint="the job waits for the limit and goes on by itself")
        if status == 403 and SUSPENDED_WORDS in exc.response.text.lower():  # not refused for good
            return ForgeWait(f"the App's installation is suspended: {message}", code=SUSPENDED,
                              retry_class=RetryClass.NEEDS_HUMAN, evidence=evidence,
                              hint="an owner unsuspends the App's installation; the job then goes "
                                   "on by itself")
        if transient:
            return ForgeError(message, code="github_transient", retry_class=RetryClass.AUTO_RETRY,
                              hint="GitHub may be having trouble; the step will be retried",
                              evidence=evidence)
        if status in REFUSED_STATUSES:
            details = validation_errors(response_body(exc))
            if details:
                evidence["errors"] = details
                message += ": " + "; ".join(
                    " ".join(filter(None, (d.get("field"), d.get("code"), d.get("message"))))
                    for d in details)[:300]
            accepted = exc.response.headers.get("x-accepted-github-permissions", "")
            hint = HINTS[status].format(permissions=f" ({accepted})" if accepted else "")
            return ForgeError(message, code=f"github_{status}", retry_class=RetryClass.DO_NOT_RETRY,
                              hint=hint, evidence=evidence)
        return ForgeError(message, code=f"github_{status}", retry_class=RetryClass.NEEDS_HUMAN,
                          hint="check the App's permissions and installation on this repository",
                          evidence=evidence)
    if isinstance(exc, RequestError) and isinstance(exc.exc, (RequestFailed, ForgeError)):
        return classify(exc.exc)  # a token mint inside another call, or a spent write budget
    if isinstance(exc, RequestError):
        return ForgeError(transport_failure(exc.exc), code="github_unreachable",
                          retry_class=RetryClass.AUTO_RETRY, hint="the step will be retried")
    return ForgeError(str(exc), code="github_error")


def transport_failure(cause: BaseException) -> str:
    """What went wrong on the way, with the transport's own reason: GitHub could not be reached
    (no connection), or the connection was lost before its answer came (a request that may
    have been done, as with a 502). The reason carries no credential: the App's token travels
    in a header, never in the URL."""
    reason = " ".join(str(cause).split())[:200]
    what = f"{type(cause).__name__} ({reason})" if reason else type(cause).__name__
    if isinstance(cause, httpx.ConnectError | httpx.ConnectTimeout):
        return f"could not reach GitHub: {what}"
    return f"GitHub's answer was lost with its connection: {what}"


def refused(exc: ForgeError) -> bool:
    """A GitHub answer that asking again will not change (a 4xx of REFUSED_STATUSES)."""
    return exc.retry_class is RetryClass.DO_NOT_RETRY and exc.evidence.get("status") in REFUSED_STATUSES
