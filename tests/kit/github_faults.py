"""What the fake GitHub's tests inject into its answers: failures (a status instead of, or after,
handling a request) and holds (a request kept waiting, as when GitHub is slow to answer)."""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Hold:
    """Requests matching `method`, `pattern` and `query` wait until `release` is set (a call GitHub
    is slow to answer); `hit` is set when the first one arrives."""

    method: str
    pattern: re.Pattern[str]
    query: dict[str, str]
    hit: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)


@dataclass
class Failure:
    method: str
    pattern: re.Pattern[str]
    status: int
    times: int
    headers: dict[str, str] = field(default_factory=dict)
    body: Any = None
    after: bool = False  # apply the request, then answer with this failure ("done, then 502")
