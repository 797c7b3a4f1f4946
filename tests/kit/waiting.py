"""Waiting on events instead of fixed sleeps: a condition polled until a deadline, a process
seen by its command line, a clock's next second or some seconds on it, and a clock a test moves
forward."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path


def wait_until(condition: Callable[[], object], *, timeout: float = 30.0, interval: float = 0.05,
               what: str = "the condition") -> None:
    """Return as soon as `condition()` is true; fail the test after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out after {timeout:g} s waiting for {what}"
        time.sleep(interval)


def command_lines() -> list[str]:
    """The command lines of the processes alive now."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                found.append((entry / "cmdline").read_bytes().decode(errors="replace"))
            except OSError:
                continue  # it ended meanwhile
    return found


def process_running(marker: str) -> bool:
    """Whether a process whose command line contains `marker` is alive."""
    return any(marker in line for line in command_lines())


def wall_clock() -> datetime:
    return datetime.now(UTC)


def pass_the_second(stamp: datetime, clock: Callable[[], datetime] = wall_clock) -> None:
    """Bring `clock` into a later second than `stamp` (which is to the second, as GitHub's
    timestamps are): whatever happens from now on is stamped strictly after it. A ShiftedClock
    is moved there; any other clock is waited for (half a second on average)."""
    if isinstance(clock, ShiftedClock):
        now = clock()
        if now.replace(microsecond=0) <= stamp:
            clock.advance((stamp + timedelta(seconds=1) - now).total_seconds())
        return
    wait_until(lambda: clock().replace(microsecond=0) > stamp, timeout=2.0, interval=0.01,
               what="the next second")


def pass_time(clock: Callable[[], datetime], seconds: float) -> None:
    """Let `seconds` pass on `clock`: a ShiftedClock is moved on, any other clock slept through."""
    if isinstance(clock, ShiftedClock):
        clock.advance(seconds)
    else:
        time.sleep(seconds)


class ShiftedClock:
    """The wall clock moved forward by what the test has `advance`d, for code that takes a clock
    (e.g. ServerContext.clock), so a test need not sleep for time to pass."""

    def __init__(self) -> None:
        self.offset = timedelta()

    def __call__(self) -> datetime:
        return datetime.now(UTC) + self.offset

    def advance(self, seconds: float) -> None:
        self.offset += timedelta(seconds=seconds)
