"""Killing a worker like a machine going away: its whole process tree frozen, then killed."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from datetime import datetime
from pathlib import Path


def wait_past_second_of(moment: datetime) -> None:
    """Until a comment written now has a GitHub timestamp (whole seconds) after `moment`, the
    gate's opening: `approve` answers only the gate open when the comment was written. The gate
    is usually seen a while after it opened, so this rarely waits at all."""
    time.sleep(max(0.0, int(moment.timestamp()) + 1.02 - time.time()))


def parent_of(pid: int) -> int:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat.rsplit(")", 1)[1].split()[1])


def descendants(pid: int) -> list[int]:
    """`pid` and every process below it (from /proc)."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError, ValueError, IndexError):
                parents[int(entry)] = parent_of(int(entry))
    tree, frontier = [pid], {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier}
        tree += sorted(frontier)
    return tree


def signal_pids(pids: list[int], sig: signal.Signals) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


def kill_tree(pid: int, *, first: list[int] | None = None) -> None:
    """Freeze everything under `pid` (SIGSTOP: nothing forks, pushes or writes any more), walk
    the tree again until it stops growing, then SIGKILL it all and the process group. RQ puts
    the work-horse in a process group of its own and the sandbox starts new sessions, so killing
    the worker's group alone would let the step run on. `first` are frozen before the walk."""
    frozen: set[int] = set()
    if first:
        signal_pids(first, signal.SIGSTOP)
        frozen.update(first)
    for _ in range(20):
        new = set(descendants(pid)) - frozen
        if not new:
            break
        signal_pids(sorted(new), signal.SIGSTOP)
        frozen |= new
    signal_pids(sorted(frozen), signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
