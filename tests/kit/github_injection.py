"""Error injection on the fake GitHub (the FakeGitHub methods of tests/kit/github.py that make
its answers fail or wait): a status instead of, or after, handling a request, primary and
secondary rate limits, a random failure rate, and held requests. The records they keep are
tests/kit/github_faults.py."""

from __future__ import annotations

import random
import re
import time
from collections.abc import Sequence
from typing import Any

from tests.kit.github_api import Reply
from tests.kit.github_faults import Failure, Hold

HANG_UP = 0  # `fail` status: no answer, the connection closed (recorded with status 0)
SECONDARY_RATE_LIMIT_MESSAGE = (
    "You have exceeded a secondary rate limit. Please wait a few minutes before you try again."
)


class FaultInjection:
    """The failures and holds a FakeGitHub applies to the requests it serves (set up in its __init__)."""

    failures: list[Failure]
    holds: list[Hold]
    _chaos: tuple[float, tuple[int, ...], random.Random, re.Pattern[str]] | None

    def fail(self, method: str, path_regex: str, status: int, *, times: int = 1,
             headers: dict[str, str] | None = None, body: Any = None, after: bool = False) -> None:
        """Answer the next `times` requests matching `method` (or '*') and re.search(path_regex, path).
        With `after=True` each request is applied first and then answered with the failure, as when
        GitHub makes a comment or a pull request and its answer is lost ("done, then 502").
        Status HANG_UP answers nothing: the connection is closed, as when GitHub's front end drops
        it (the client sees "server disconnected")."""
        failure = Failure(method.upper(), re.compile(path_regex), status, times, dict(headers or {}), body,
                          after)
        self.failures.append(failure)

    def hold(self, method: str, path_regex: str, *, query: dict[str, str] | None = None) -> Hold:
        """Keep matching requests waiting (without the fake's lock) until `.release.set()`;
        `.hit.wait()` returns once one arrived: a test can kill a worker while it waits."""
        held = Hold(method.upper(), re.compile(path_regex), dict(query or {}))
        self.holds.append(held)
        return held

    def fail_secondary_rate_limit(self, method: str, path_regex: str, *, retry_after: int | None = 1,
                                  times: int = 1) -> None:
        """GitHub's secondary rate limit: 403 with its message, with `Retry-After` or (None)
        without it, as GitHub also answers (then a client must wait at least a minute)."""
        headers = {"Retry-After": str(retry_after)} if retry_after is not None else {}
        self.fail(method, path_regex, 403, times=times, headers=headers,
                  body={"message": SECONDARY_RATE_LIMIT_MESSAGE,
                        "documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"})

    def fail_primary_rate_limit(self, method: str, path_regex: str, *, reset_in: int = 60,
                                times: int = 1) -> None:
        headers = {"X-RateLimit-Limit": "5000", "X-RateLimit-Remaining": "0", "X-RateLimit-Used": "5000",
                   "X-RateLimit-Reset": str(int(time.time()) + reset_in), "X-RateLimit-Resource": "core"}
        self.fail(method, path_regex, 403, times=times, headers=headers,
                  body={"message": "API rate limit exceeded for installation ID 1.",
                        "documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"})

    def fail_rate(self, p: float, statuses: Sequence[int] = (502,), *, seed: int | None = None,
                  path_regex: str = r"^/(repos|graphql)") -> None:
        """Fail a random fraction `p` of matching requests with one of `statuses` (p=0 turns it off)."""
        self._chaos = (p, tuple(statuses), random.Random(seed), re.compile(path_regex)) if p else None

    def _injected_after(self, method: str, path: str) -> Reply | None:
        """The failure to answer having handled the request ("done, then 502")."""
        return self._matching_failure(method, path, after=True)

    def _matching_failure(self, method: str, path: str, *, after: bool) -> Reply | None:
        for failure in self.failures:
            if failure.after == after and failure.times > 0 and failure.method in ("*", method) \
                    and failure.pattern.search(path):
                failure.times -= 1
                if failure.status == HANG_UP:
                    return Reply(HANG_UP, b"")
                body = failure.body if failure.body is not None else {"message": _reason(failure.status)}
                return Reply(failure.status, body, dict(failure.headers))
        return None

    def _injected(self, method: str, path: str) -> Reply | None:
        """The failure to answer instead of handling the request."""
        reply = self._matching_failure(method, path, after=False)
        if reply is not None:
            return reply
        if self._chaos and self._chaos[3].search(path):
            p, statuses, rng, _ = self._chaos
            if rng.random() < p:
                status = rng.choice(statuses)
                return Reply(status, {"message": _reason(status)})
        return None


def _reason(status: int) -> str:
    from http import HTTPStatus

    return {502: "Server Error", 401: "Bad credentials"}.get(status, HTTPStatus(status).phrase)
