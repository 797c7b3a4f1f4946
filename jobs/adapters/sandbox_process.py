"""Running one command's process group: its own session, the timeout and the cooperative stop,
the kill of the whole group at the end, and the tail of its merged output (the sandboxes in
jobs/adapters/sandbox.py wrap the argv first)."""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO

from jobs.domain.output_tail import choose_tail
from jobs.domain.programs import program_name
from jobs.domain.sandboxing import CommandResult

TAIL_LINES = 40
TAIL_LINE_CHARS = 500
TAIL_TOTAL_CHARS = 6000
TAIL_READ_BYTES = 64 * 1024


def _read_output(out: IO[bytes]) -> tuple[str, int]:
    """(tail, total line count) of the output file, reading only its last TAIL_READ_BYTES."""
    out.flush()
    size = out.seek(0, os.SEEK_END)
    out.seek(0)
    lines, last = 0, b""
    while chunk := out.read(1 << 20):
        lines += chunk.count(b"\n")
        last = chunk[-1:]
    if size and last != b"\n":
        lines += 1
    start = max(0, size - TAIL_READ_BYTES)
    out.seek(start)
    text = out.read().decode("utf-8", errors="replace")
    kept = text.removesuffix("\n").split("\n")
    kept = kept[1:] if start and len(kept) > 1 else kept  # the first one read may be partial
    # The failing test's report when the runner printed one, not just the last lines.
    chosen = choose_tail(kept, limit=TAIL_LINES)
    tail = "\n".join(line.rstrip("\r")[:TAIL_LINE_CHARS] for line in chosen)
    if len(tail) > TAIL_TOTAL_CHARS:
        tail = tail[-TAIL_TOTAL_CHARS:].partition("\n")[2]
    return tail, lines


STOP_POLL_S = 0.5


def _wait_once(proc: subprocess.Popen[bytes], timeout: float) -> bool:
    """Wait for the process to exit (without reaping it when pidfds exist); False on timeout."""
    if hasattr(os, "pidfd_open"):
        fd = os.pidfd_open(proc.pid)
        try:
            poller = select.poll()
            poller.register(fd, select.POLLIN)
            return bool(poller.poll(int(min(max(timeout, 0), 2e6) * 1000)))  # poll's int limit
        finally:
            os.close(fd)
    try:  # without pidfds the leader is reaped here; the group kill below is best effort
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        return False
    return True


def _wait(proc: subprocess.Popen[bytes], timeout: float,
          should_stop: Callable[[], bool] | None) -> str:
    """"exited", "timeout" or "stopped" (when `should_stop` turned true meanwhile)."""
    if should_stop is None:
        return "exited" if _wait_once(proc, timeout) else "timeout"
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        if _wait_once(proc, min(STOP_POLL_S, max(left, 0))):
            return "exited"
        if time.monotonic() >= deadline:
            return "timeout"
        if should_stop():
            return "stopped"


def execute(
    argv: Sequence[str], cmd: Sequence[str], *, cwd: Path, env: dict[str, str], timeout: float,
    isolated: bool, should_stop: Callable[[], bool] | None = None,
) -> CommandResult:  # fmt: skip
    """Run `cmd` (the real argv, maybe wrapped) in its own session; kill its group at the end."""
    started = time.monotonic()
    with tempfile.TemporaryFile() as out:
        try:
            proc = subprocess.Popen(
                list(cmd), stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                cwd=cwd, env=env, start_new_session=True, close_fds=True,
            )  # fmt: skip
        except OSError as exc:  # lost a race with `which`, or not executable
            code = 127 if isinstance(exc, FileNotFoundError) else 126
            return not_run(argv, code, f"{program_name(argv[0])}: {exc.strerror}", isolated)
        ended = "exited"
        try:
            ended = _wait(proc, timeout, should_stop)
        finally:
            # Kill whatever is left in the group (background children, or everything on
            # timeout) while the leader is still unreaped, so the group id cannot be reused.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            exit_code = proc.wait()
        duration = time.monotonic() - started
        tail, lines = _read_output(out)
    return CommandResult(
        argv=tuple(argv), exit_code=exit_code, duration_s=duration, output_tail=tail,
        output_lines=lines, timed_out=ended == "timeout", isolated=isolated,
        cancelled=ended == "stopped",
    )  # fmt: skip


def not_run(argv: Sequence[str], code: int, message: str, isolated: bool) -> CommandResult:
    return CommandResult(tuple(argv), code, 0.0, message, 1, False, isolated)
