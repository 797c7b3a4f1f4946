"""What stands between a guesser and the task center: a dashboard token strong enough not to
be guessed (checked when the web app starts, refusing to start with a message naming the fix)
and a limit on failed logins per client address (per minute), past which `/login`, and every
request offering a Bearer token, answers 429 with Retry-After. Every failure counts, a wrong
Bearer token as much as a wrong login form; one client's guesses never lock anyone else out."""

from __future__ import annotations

import math
import time
from collections import Counter, deque

from bot.settings import SettingsError

MIN_TOKEN_CHARS = 32
MIN_TOKEN_BITS = 100.0  # estimated from its characters and how often each appears (hex of 16 bytes: ~120)
FAILURES_PER_CLIENT = 5
WINDOW_S = 60.0
WEAK_HINT = ("set STEPWISE_DASHBOARD_TOKEN to a long random value, for example the output of "
             "`python3 -c 'import secrets; print(secrets.token_urlsafe(32))'`, or unset it to "
             "turn the task center off")


def token_bits(token: str) -> float:
    """The token's length times the Shannon entropy of its characters (bits, an estimate)."""
    counts = Counter(token)
    per_char = -sum(n / len(token) * math.log2(n / len(token)) for n in counts.values())
    return per_char * len(token)


def check_token_strength(token: str) -> None:
    """Raise SettingsError (naming the fix) for a token that is short or low in entropy."""
    if len(token) < MIN_TOKEN_CHARS:
        raise SettingsError(f"STEPWISE_DASHBOARD_TOKEN is {len(token)} characters long; the "
                            f"task center needs at least {MIN_TOKEN_CHARS}", hint=WEAK_HINT)
    if token_bits(token) < MIN_TOKEN_BITS:
        raise SettingsError("STEPWISE_DASHBOARD_TOKEN repeats too few characters to be hard to "
                            f"guess (about {token_bits(token):.0f} bits)", hint=WEAK_HINT)


class LoginLimiter:
    """Failed logins in the last WINDOW_S seconds, per client (one web process)."""

    def __init__(self) -> None:
        self._failures: deque[tuple[float, str]] = deque()

    def _trim(self, now: float) -> None:
        while self._failures and now - self._failures[0][0] > WINDOW_S:
            self._failures.popleft()

    def blocked(self, client: str) -> float:
        """Seconds to wait before `client` may try again (0: it may try now)."""
        now = time.monotonic()
        self._trim(now)
        mine = [at for at, who in self._failures if who == client]
        if len(mine) >= FAILURES_PER_CLIENT:
            return WINDOW_S - (now - mine[0])
        return 0.0

    def failed(self, client: str) -> None:
        self._failures.append((time.monotonic(), client))
