"""Conditional reads for what Stepwise polls (part of the GitHub adapter): a GET sent with the
ETag of its last answer (`If-None-Match`) is answered `304 Not Modified` while nothing changed,
which GitHub does not count against the rate limit; the answer is then taken from here.

The store is bounded (by the bytes of the answers it keeps, oldest dropped first) and per App
process, so a long-lived worker does not grow: githubkit's own HTTP cache (hishel) is turned off
in bot/github/app.py because it was process-wide and never expired.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

MAX_BYTES = 8 * 1024 * 1024  # answers kept for revalidation, all installations together


class ConditionalReads:
    """Answers of conditional GETs by request key, with their ETags, at most `max_bytes`."""

    def __init__(self, max_bytes: int = MAX_BYTES) -> None:
        self.max_bytes = max_bytes
        self.size = 0
        self.not_modified = 0  # 304s served from here (metrics, tests)
        self._entries: OrderedDict[Hashable, tuple[str, Any, int]] = OrderedDict()
        self._lock = threading.Lock()

    def read(self, key: Hashable, fetch: Callable[[dict[str, str]], Any]) -> Any:
        """The JSON of `fetch(headers)` (a githubkit response), sending the ETag kept for `key`
        and using the kept answer when GitHub says 304."""
        with self._lock:
            cached = self._entries.get(key)
            if cached is not None:
                self._entries.move_to_end(key)
        response = fetch({"If-None-Match": cached[0]} if cached is not None else {})
        if response.status_code == 304 and cached is not None:
            with self._lock:
                self.not_modified += 1
            return cached[1]
        data = response.json()
        etag = response.headers.get("etag")
        if etag:
            self._keep(key, etag, data, len(response.content))
        return data

    def _keep(self, key: Hashable, etag: str, data: Any, size: int) -> None:
        if size > self.max_bytes // 4:
            return  # one answer never takes most of the store
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self.size -= old[2]
            self._entries[key] = (etag, data, size)
            self.size += size
            while self.size > self.max_bytes and self._entries:
                _, (_, _, dropped) = self._entries.popitem(last=False)
                self.size -= dropped

    def __len__(self) -> int:
        return len(self._entries)
