"""GitHub's secondary limit on content-creating requests, kept by Stepwise itself: one write budget
per installation, shared by every worker through Redis (part of the GitHub adapter).

GitHub allows an integration at most 80 content-generating requests a minute and 500 an hour,
and asks that writes be spaced rather than sent in bursts; past that it answers 403/429
"secondary rate limit" and may ban an integration that keeps going. Every POST, PATCH, PUT and
DELETE an installation's client sends (bot/github/app.py's request hook) first takes a slot here:

- `take(key)`: 0.0 when the write may go now (the slot is taken), else the seconds until one is
  free (nothing is taken). Atomic in Redis (one Lua script), so all workers share the counts.
- `spend(key)`: waits in place for a short wait (spacing, at most `max_inline_wait_s`), and for
  a longer one raises `WriteBudgetWait`, a rate-limit `ForgeWait`: the job's step is queued again
  for when the budget has room (bot/server/rate_limits.py) instead of a worker sleeping on it.
- `used(key)`: the writes of the last minute and the last hour (the bench and the task center).

Spacing is a token bucket (GCRA): up to `burst` writes go at once, then one every
`60 / (per_minute - burst)` seconds (0.86 s by default); the minute and hour counts are exact
sliding windows besides. The campaigns
helper paces issue and pull-request creation with the same port (`WritePacer`).
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from redis import Redis

from bot.github.errors import RATE_LIMITED, ForgeWait
from jobs.basics.errors import RetryClass

CONTENT_METHODS = frozenset({"POST", "PATCH", "PUT", "DELETE"})
WRITE_BUDGET = "write_budget"  # the kind of limit a WriteBudgetWait reports

# KEYS: the log (sorted set), the bucket's theoretical arrival time, a sequence.
# ARGV: now, per_minute, per_hour, interval_s, burst. Returns the wait as a string ("0": taken).
_TAKE = """
local now = tonumber(ARGV[1])
local per_minute, per_hour = tonumber(ARGV[2]), tonumber(ARGV[3])
local interval, burst = tonumber(ARGV[4]), tonumber(ARGV[5])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', string.format('%.6f', now - 3600))
local wait = 0
local hour = redis.call('ZCARD', KEYS[1])
if hour >= per_hour then
  local oldest = redis.call('ZRANGE', KEYS[1], hour - per_hour, hour - per_hour, 'WITHSCORES')
  wait = math.max(wait, tonumber(oldest[2]) + 3600 - now)
end
local since = '(' .. string.format('%.6f', now - 60)
local minute = redis.call('ZCOUNT', KEYS[1], since, '+inf')
if minute >= per_minute then
  local first = redis.call('ZRANGEBYSCORE', KEYS[1], since, '+inf', 'WITHSCORES',
                           'LIMIT', minute - per_minute, 1)
  wait = math.max(wait, tonumber(first[2]) + 60 - now)
end
local tat = math.max(tonumber(redis.call('GET', KEYS[2]) or '0'), now)
wait = math.max(wait, tat - interval * (burst - 1) - now)
if wait > 0.001 then
  return string.format('%.6f', math.ceil(wait * 1000000) / 1000000)  -- never short
end
local seq = redis.call('INCR', KEYS[3])
redis.call('ZADD', KEYS[1], now, string.format('%.6f', now) .. ':' .. seq)
redis.call('SET', KEYS[2], string.format('%.6f', tat + interval), 'EX', 3600)
redis.call('EXPIRE', KEYS[1], 3600)
redis.call('EXPIRE', KEYS[3], 3600)
return '0'
"""


@dataclass(frozen=True)
class BudgetLimits:
    """GitHub's numbers (documented secondary limits), and how Stepwise spaces and waits."""

    per_minute: int = 80
    per_hour: int = 500
    burst: int = 10  # writes sent back to back before spacing sets in
    max_inline_wait_s: float = 5.0  # a longer wait re-queues the step instead of sleeping

    @property
    def interval_s(self) -> float:
        """The spacing after a burst: a burst and a minute of spaced writes stay within
        `per_minute` (so the minute's cap never stops a job short, and writes stay even)."""
        return 60.0 / max(1, self.per_minute - min(self.burst, self.per_minute - 1))


class WritePacer(Protocol):
    """The port: take one content-creating write's slot for `key` (an installation id), waiting
    briefly or raising WriteBudgetWait (a ForgeWait the step turns into a scheduled retry)."""

    def spend(self, key: str) -> None: ...


class WriteBudgetWait(ForgeWait):
    """The installation's write budget is spent for longer than a worker should sleep."""


def is_content_creating(method: str, path: str) -> bool:
    """Whether GitHub counts the request against the content-creation limit: every write an
    installation makes (a token mint is the App's, not the installation's)."""
    return method.upper() in CONTENT_METHODS and not path.endswith("/access_tokens")


class WriteBudget:
    """One installation's write budget in Redis (see the module docstring)."""

    def __init__(self, redis: Redis, limits: BudgetLimits | None = None, *,
                 key: Callable[[str], str],
                 clock: Callable[[], float] = time.time,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        """`key` spells an installation's Redis key (bot/plumbing/keys.py github_writes_key:
        the GitHub adapter sits below the Redis plumbing, so the key is handed in)."""
        self.redis, self.limits, self.key = redis, limits or BudgetLimits(), key
        self.clock, self.sleep = clock, sleep
        self._script: Any = redis.register_script(_TAKE)
        self.waited_s = 0.0  # slept in place by this process (the bench reads it)

    def _keys(self, key: str) -> list[str]:
        log = self.key(key)
        return [log, f"{log}:tat", f"{log}:seq"]

    def take(self, key: str) -> float:
        limits = self.limits
        answer = self._script(keys=self._keys(key), args=[
            repr(self.clock()), limits.per_minute, limits.per_hour, repr(limits.interval_s),
            limits.burst])
        return max(0.0, float(answer.decode() if isinstance(answer, bytes) else answer))

    def spend(self, key: str) -> None:
        for attempt in itertools.count():
            wait = self.take(key)
            if wait <= 0:
                return
            if wait > self.limits.max_inline_wait_s or attempt >= 20:
                raise WriteBudgetWait(
                    f"installation {key} has used its GitHub write budget "
                    f"({self.limits.per_minute} a minute, {self.limits.per_hour} an hour): "
                    f"the next write may go in {wait:.0f} s", code=RATE_LIMITED,
                    retry_class=RetryClass.AUTO_RETRY,
                    evidence={"rate_limit": WRITE_BUDGET, "retry_after": wait, "asked": True},
                    hint="the job waits for the budget and goes on by itself")
            self.sleep(wait)
            self.waited_s += wait

    def used(self, key: str) -> tuple[int, int]:
        """(writes in the last minute, writes in the last hour)."""
        now, log = self.clock(), self._keys(key)[0]
        return (int(self.redis.zcount(log, f"({now - 60}", "+inf")),
                int(self.redis.zcount(log, f"({now - 3600}", "+inf")))
