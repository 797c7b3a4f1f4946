"""An outage reads as a few lines, not a flood: the same warning or error from the same logger
(RQ's reconnect attempts, a connection error in every round) is written once, then held back
for QUIET_S; the next one written after that says how many were held back (`repeats`). And in
a worker, what would reach stderr around logging (the traceback multiprocessing prints when
RQ's scheduler process dies) becomes one JSON log line."""

from __future__ import annotations

import io
import logging
import re
import threading
import time
from collections.abc import Callable

QUIET_S = 300.0
DIGITS = re.compile(r"\d+")


OUTAGE_ERRORS = frozenset({"ConnectionError", "TimeoutError", "BusyLoadingError",
                           "ConnectionRefusedError", "ConnectionResetError"})


def about_an_outage(record: logging.LogRecord) -> bool:
    """RQ's own warnings and errors (its loops retry every few seconds), and anyone's about
    Redis or a lost connection; a job's own failures are never held back."""
    if record.name == "rq" or record.name.startswith("rq."):
        return True
    kind = record.exc_info[0].__name__ if record.exc_info and record.exc_info[0] else ""
    return kind in OUTAGE_ERRORS or "Redis" in str(record.msg) or \
        str(getattr(record, "error", "")) in OUTAGE_ERRORS


class RepeatFilter(logging.Filter):
    """Hold back an outage's warning or error (`about_an_outage`) seen from the same logger
    within QUIET_S (info and debug pass: they are the state changes and the work)."""

    def __init__(self, quiet_s: float = QUIET_S, clock: Callable[[], float] = time.monotonic
                 ) -> None:
        super().__init__()
        self.quiet_s, self.clock = quiet_s, clock
        self._last: dict[tuple[str, int, str], tuple[float, int]] = {}
        self._lock = threading.Lock()

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING or not about_an_outage(record):
            return True
        kind = record.exc_info[0].__name__ if record.exc_info and record.exc_info[0] else ""
        key = (record.name, record.levelno, kind or DIGITS.sub("N", str(record.msg))[:200])
        now = self.clock()
        with self._lock:
            last = self._last.get(key)
            if last is not None and now - last[0] < self.quiet_s:
                self._last[key] = (last[0], last[1] + 1)
                return False
            self._last[key] = (now, 0)
        if last is not None and last[1]:
            record.repeats = last[1]  # held back since the last one written
        return True


class StderrToLog(io.TextIOBase):
    """A stand-in for sys.stderr: what is written is logged as one record per flush."""

    def __init__(self, logger: logging.Logger) -> None:
        self.logger = logger
        self._parts: list[str] = []

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self._parts.append(text)
        if sum(len(p) for p in self._parts) > 64_000:
            self.flush()
        return len(text)

    def flush(self) -> None:
        text, self._parts = "".join(self._parts).rstrip(), []
        if text:
            self.logger.error("written to stderr: %s", text)
