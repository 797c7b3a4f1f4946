"""GitHub's rate limits as the fake GitHub enforces them, per installation, in the fake's clock.

- Primary: an installation has `primary_limit` requests an hour (GitHub: 5,000 at least).
  Every answer carries `x-ratelimit-limit/remaining/used/reset/resource`, the remaining count
  going down with each request; at 0 the request is refused 429 with
  `x-ratelimit-remaining: 0` and the reset time, until the hour is over.
- Secondary, content creation: at most `writes_per_minute` (80) content-generating requests
  (POST, PATCH, PUT, DELETE) a minute and `writes_per_hour` (500) an hour; past that GitHub
  answers 403 "You have exceeded a secondary rate limit", without Retry-After.

A refused request counts against the primary limit but creates nothing.

`WORLD_WRITE_BURST` is the write burst of the App in the test worlds (the server settings'
`github_write_burst`), so that a story's few dozen writes go at once instead of one every 0.86 s.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

SECONDARY_MESSAGE = ("You have exceeded a secondary rate limit. Please wait a few minutes before "
                     "you try again. If you reach out to GitHub Support for help, please include "
                     "the request ID.")
CONTENT_METHODS = frozenset({"POST", "PATCH", "PUT", "DELETE"})
# The App's write budget in a test world keeps GitHub's 80 a minute, which the fake enforces, but
# sends up to 67 writes at once (production: 10) before spacing them; the spacing left, 60 / (80 -
# 67) = 4.6 s, is still under the 5 s a worker sleeps in place, so a longer story waits as it
# would in production and is never re-queued. Spacing itself is tested on a clock that moves
# only when told (tests/bot/github/test_write_budget.py), pacing by the budget in
# tests/bot/test_app_campaign_pacing.py.
WORLD_WRITE_BURST = 67


@dataclass
class Bucket:
    """One installation's counts."""

    window_start: float = 0.0
    used: int = 0
    writes: deque[float] = field(default_factory=deque)


@dataclass
class RateLimits:
    primary_limit: int = 5000
    writes_per_minute: int = 80
    writes_per_hour: int = 500
    buckets: dict[int, Bucket] = field(default_factory=dict)
    refused_writes: int = 0  # content-creating requests refused for the secondary limit

    def _bucket(self, installation_id: int, now: float) -> Bucket:
        bucket = self.buckets.setdefault(installation_id, Bucket(window_start=now))
        if now >= bucket.window_start + 3600:
            bucket.window_start, bucket.used = now, 0
        return bucket

    def headers(self, installation_id: int, now: float) -> dict[str, str]:
        bucket = self._bucket(installation_id, now)
        return {"X-RateLimit-Limit": str(self.primary_limit),
                "X-RateLimit-Remaining": str(max(0, self.primary_limit - bucket.used)),
                "X-RateLimit-Used": str(min(bucket.used, self.primary_limit)),
                "X-RateLimit-Reset": str(int(bucket.window_start + 3600)),
                "X-RateLimit-Resource": "core"}

    def admit(self, installation_id: int, method: str, now: float) -> tuple[int, str] | None:
        """Count one request: None when it may go, else GitHub's refusal (status, message)."""
        bucket = self._bucket(installation_id, now)
        if bucket.used >= self.primary_limit:
            return 429, f"API rate limit exceeded for installation ID {installation_id}."
        bucket.used += 1
        if method.upper() not in CONTENT_METHODS:
            return None
        while bucket.writes and bucket.writes[0] <= now - 3600:
            bucket.writes.popleft()
        last_minute = sum(1 for at in bucket.writes if at > now - 60)
        if last_minute >= self.writes_per_minute or len(bucket.writes) >= self.writes_per_hour:
            self.refused_writes += 1
            return 403, SECONDARY_MESSAGE
        bucket.writes.append(now)
        return None
