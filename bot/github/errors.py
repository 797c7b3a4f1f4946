"""How a failed GitHub call is reported: `ForgeError`, and `classify` turning any githubkit
failure into one (transient or needing a human, without URLs carrying credentials)."""

from __future__ import annotations

from githubkit.exception import RequestError, RequestFailed

from bot.github.retry import retry_after_s, transient_status
from jobs.domain.errors import RetryClass, StepwiseError


class ForgeError(StepwiseError):
    """A GitHub call failed; the retry class says whether to back off or stop."""

    code = "github_error"


def classify(exc: Exception) -> ForgeError:
    """One ForgeError for any githubkit failure, without URLs carrying credentials."""
    if isinstance(exc, ForgeError):
        return exc  # already classified (e.g. by the token mint inside another call)
    if isinstance(exc, RequestFailed):
        status = exc.response.status_code
        transient = transient_status(status, exc.response.text)
        wait = retry_after_s(exc)
        return ForgeError(
            f"GitHub answered {status} to {exc.request.method} {exc.request.url.path}",
            code="github_transient" if transient else f"github_{status}",
            retry_class=RetryClass.AUTO_RETRY if transient else RetryClass.NEEDS_HUMAN,
            hint="GitHub may be having trouble; the step will be retried" if transient
            else "check the App's permissions and installation on this repository",
            evidence={"status": status, **({"retry_after": wait} if wait else {})},
        )
    if isinstance(exc, RequestError) and isinstance(exc.exc, RequestFailed):
        return classify(exc.exc)  # a token mint that failed inside another call
    if isinstance(exc, RequestError):
        return ForgeError(f"could not reach GitHub: {type(exc.exc).__name__}",
                          code="github_unreachable", retry_class=RetryClass.AUTO_RETRY,
                          hint="the step will be retried")
    return ForgeError(str(exc), code="github_error")
