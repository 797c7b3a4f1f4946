"""How a failed GitHub call is reported: `ForgeError`, and `classify` turning any githubkit
failure into one (transient, needing a human, or never to be retried, without URLs carrying
credentials).

A 4xx that will not change by asking again (422: GitHub found the request invalid; 404 and 410:
the thing is gone or hidden from the App; 403 that is not a rate limit: a permission is missing)
is `do_not_retry`: the step does not back off, and the reconciler does not publish it again
(bot/github/forge.py keeps it as refused, shown on the card and in the task center).
"""

from __future__ import annotations

import json
import time
from typing import Any

from githubkit.exception import RequestError, RequestFailed

from bot.github.retry import SECONDARY_MIN_WAIT_S, rate_limit, retry_after_s, transient_status
from jobs.basics.errors import PlatformWait, RetryClass, StepwiseError

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
    if isinstance(exc, RequestError) and isinstance(exc.exc, RequestFailed):
        return classify(exc.exc)  # a token mint that failed inside another call
    if isinstance(exc, RequestError):
        return ForgeError(f"could not reach GitHub: {type(exc.exc).__name__}",
                          code="github_unreachable", retry_class=RetryClass.AUTO_RETRY,
                          hint="the step will be retried")
    return ForgeError(str(exc), code="github_error")


def refused(exc: ForgeError) -> bool:
    """A GitHub answer that asking again will not change (a 4xx of REFUSED_STATUSES)."""
    return exc.retry_class is RetryClass.DO_NOT_RETRY and exc.evidence.get("status") in REFUSED_STATUSES
