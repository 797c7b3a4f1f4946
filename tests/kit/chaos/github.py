"""The loopback fake GitHub of tests/kit, with faults: calls that fail (502, a real secondary
rate limit) before or after they are handled, and late answers."""

from __future__ import annotations

import random
import re
import sys
import time
from collections import Counter
from typing import Any

from tests.kit.github import FakeGitHub
from tests.kit.github_api import Reply
from tests.kit.github_injection import SECONDARY_RATE_LIMIT_MESSAGE


class ChaosGitHub(FakeGitHub):
    """FakeGitHub plus random faults: 502, or 403 with the secondary-rate-limit message and a
    Retry-After header. (The fake's own `fail_rate(statuses=(502, 403))` answers a plain
    `403 Forbidden`, which is a permission error, not a rate limit.)"""

    API = re.compile(r"^/(repos|graphql)")
    API_AND_TOKEN = re.compile(r"^/")  # every endpoint: token minting and comment posting too
    WRITES = frozenset({"POST", "PATCH", "PUT", "DELETE"})

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.fault_p = 0.0
        self.fault_rng = random.Random(0)
        self.fault_paths = self.API_AND_TOKEN
        self.faults: Counter[str] = Counter()
        self.slow_rules: list[list[Any]] = []
        self.slowed: list[str] = []  # requests being (or having been) answered late
        self._server.handle_error = self._client_gone  # type: ignore[method-assign]

    def _client_gone(self, request: Any, client_address: Any) -> None:
        """A killed worker's connection breaks mid-answer: expected here, not worth a trace."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super(type(self._server), self._server).handle_error(request, client_address)

    def slow(self, method: str, path_regex: str, seconds: float, *, times: int = 1) -> None:
        """Answer the next `times` matching requests `seconds` late (outside the fake's lock)."""
        self.slow_rules.append([method.upper(), re.compile(path_regex), seconds, times])

    def handle(self, method: str, target: str, headers: dict[str, str],
               body: bytes) -> tuple[int, dict[str, str], bytes]:
        for rule in self.slow_rules:
            if rule[3] > 0 and rule[0] == method and rule[1].search(target.split("?")[0]):
                rule[3] -= 1
                self.slowed.append(target)
                time.sleep(rule[2])
                break
        return super().handle(method, target, headers, body)

    def inject_faults(self, p: float, *, seed: int = 0, token_endpoint: bool = True) -> None:
        self.fault_p, self.fault_rng = p, random.Random(seed)
        self.fault_paths = self.API_AND_TOKEN if token_endpoint else self.API

    def _injected_after(self, method: str, path: str) -> Reply | None:
        """A third of the faults on writes come after the change was made ("done, then 502")."""
        reply = super()._injected_after(method, path)
        if reply is not None or self._pending_after is None:
            return reply
        where, self._pending_after = self._pending_after, None
        self.faults[f"502 after success ({where})"] += 1
        return Reply(502, {"message": "Server Error"})

    _pending_after: str | None = None

    def _injected(self, method: str, path: str) -> Reply | None:
        reply = super()._injected(method, path)
        if reply is not None or not self.fault_p or not self.fault_paths.search(path):
            return reply
        if self.fault_rng.random() >= self.fault_p:
            return None
        where = "token endpoint" if path.startswith("/app/") else "API"
        if method in self.WRITES and self.fault_rng.random() < 1 / 3:
            self._pending_after = where  # handled, then answered 502 (under the fake's lock)
            return None
        if self.fault_rng.random() < 0.5:
            self.faults[f"502 ({where})"] += 1
            return Reply(502, {"message": "Server Error"})
        self.faults[f"secondary rate limit ({where})"] += 1
        return Reply(403, {"message": SECONDARY_RATE_LIMIT_MESSAGE,
                           "documentation_url": "https://docs.github.com/rest"},
                     {"Retry-After": "1"})
