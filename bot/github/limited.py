"""Until when GitHub has limited an installation, shared by every worker through Redis (part of
the GitHub adapter).

When GitHub answers a rate limit (primary: until `x-ratelimit-reset`; secondary: its
`Retry-After`, or at least a minute), every later request of that installation waits until then,
whichever path makes it (a job's step, a webhook's task, the reconciler re-sending what is owed):
GitHub asks integrations to stop while limited and may ban those that do not. bot/github/app.py
records each limit from the answers (a response hook) and refuses to send before the time (a
request hook raising `LimitedWait`, a rate-limit ForgeWait the step turns into a scheduled retry).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from redis import Redis

from bot.github.errors import RATE_LIMITED, SECONDARY_MIN_WAIT_S, ForgeWait
from jobs.basics.errors import RetryClass


class LimitedWait(ForgeWait):
    """The installation is rate limited until a known time: nothing is sent before it."""


class LimitedUntil:
    """Per installation: the time (epoch seconds) before which no request is sent."""

    def __init__(self, redis: Redis, *, key: Callable[[str], str],
                 clock: Callable[[], float] = time.time) -> None:
        """`key` spells an installation's Redis key (bot/plumbing/keys.py github_limited_key:
        the GitHub adapter sits below the Redis plumbing, so the key is handed in)."""
        self.redis, self.clock, self.key = redis, clock, key

    def until(self, key: str) -> float:
        raw = self.redis.get(self.key(key))
        return float(raw) if raw else 0.0

    def limit(self, key: str, kind: str, wait_s: float | None) -> float:
        """Record a limit met now (`wait_s` None: GitHub did not say how long); the time kept."""
        until = self.clock() + (wait_s if wait_s is not None else SECONDARY_MIN_WAIT_S)
        if until > self.until(key):
            self.redis.set(self.key(key), repr(until),
                           ex=max(1, int(until - self.clock()) + 1))
        return until

    def check(self, key: str) -> None:
        """Raise LimitedWait while `key` is limited."""
        left = self.until(key) - self.clock()
        if left > 0:
            raise LimitedWait(
                f"GitHub rate-limited installation {key}: no request is sent for {left:.0f} s",
                code=RATE_LIMITED, retry_class=RetryClass.AUTO_RETRY,
                evidence={"rate_limit": "limited", "retry_after": left, "asked": True},
                hint="the job waits for the limit and goes on by itself")
