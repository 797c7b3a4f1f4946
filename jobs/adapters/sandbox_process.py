"""Running one command's process group: its own session, the timeout and the cooperative stop,
the kill of the whole group at the end, and its merged output, read from a pipe while it runs and
never stored whole (the sandboxes in jobs/adapters/sandbox.py wrap the argv first).

Of the output only the line count, the first OUTPUT_HEAD_BYTES and the last OUTPUT_KEPT_BYTES
(jobs/inputs/caps.py) are kept, in memory: a command printing gigabytes costs neither disk nor
memory. A process that outlives the command and keeps the pipe open (possible without bubblewrap)
cannot stall the reader: once the command has ended, it takes what is already in the pipe and stops.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from jobs.inputs.caps import OUTPUT_HEAD_BYTES, OUTPUT_KEPT_BYTES
from jobs.inputs.programs import program_name
from jobs.inputs.sandboxing import CommandResult
from jobs.notes.annotations import choose_tail

CHUNK = 1 << 16
POLL_S = 0.1
LINGER_S = 1.0  # after the command ended, how long output still arriving is taken


class OutputSink:
    """Drains the read end of a pipe on a thread; `finish()` then gives the kept tail."""

    def __init__(self, read_fd: int, *, keep: int = OUTPUT_KEPT_BYTES) -> None:
        self._fd = read_fd
        self._keep = keep
        self._kept = bytearray()
        self.head = bytearray()  # the first OUTPUT_HEAD_BYTES, for the failed attempt's log
        self.total = 0
        self.newlines = 0
        self._last = b""
        self._stop = threading.Event()
        self._deadline = 0.0
        self._thread = threading.Thread(target=self._drain, daemon=True, name="stepwise-output")
        self._thread.start()

    def _drain(self) -> None:
        try:
            while True:
                ready, _, _ = select.select([self._fd], [], [], POLL_S)
                if self._stop.is_set() and (not ready or time.monotonic() > self._deadline):
                    return
                if not ready:
                    continue
                chunk = os.read(self._fd, CHUNK)
                if not chunk:
                    return
                self._take(chunk)
        except OSError:
            return

    def _take(self, chunk: bytes) -> None:
        if len(self.head) < OUTPUT_HEAD_BYTES:
            self.head += chunk[: OUTPUT_HEAD_BYTES - len(self.head)]
        self.total += len(chunk)
        self.newlines += chunk.count(b"\n")
        self._last = chunk[-1:]
        self._kept += chunk
        if len(self._kept) > 2 * self._keep:  # trimmed in steps, not on every read
            del self._kept[: len(self._kept) - self._keep]

    def finish(self) -> tuple[bytes, int, bool]:
        """(the last kept bytes, the number of lines, whether earlier output was dropped),
        once the command has ended."""
        self._deadline = time.monotonic() + LINGER_S
        self._stop.set()
        self._thread.join()
        os.close(self._fd)
        lines = self.newlines + (1 if self.total and self._last != b"\n" else 0)
        kept = bytes(self._kept[-self._keep:])
        return kept, lines, self.total > len(kept)

    def log(self, kept: bytes) -> str:
        """The output as far as it was kept: whole when it fit, else its head, a line saying
        how much was left out, and the kept tail (call after `finish`)."""
        head = bytes(self.head)
        if self.total <= len(head) + len(kept):
            text = head + kept[len(kept) - (self.total - len(head)):] if self.total > len(head) \
                else head
            return text.decode("utf-8", errors="replace")
        skipped = self.total - len(head) - len(kept)
        return (head.decode("utf-8", errors="replace")
                + f"\n[… {skipped:,} bytes of output left out …]\n"
                + kept.decode("utf-8", errors="replace"))


TAIL_LINES = 40
TAIL_LINE_CHARS = 500
TAIL_TOTAL_CHARS = 6000
TAIL_READ_BYTES = OUTPUT_KEPT_BYTES


def _tail(kept: bytes, *, dropped: bool) -> str:
    """The last TAIL_LINES lines (each cut to TAIL_LINE_CHARS) of the kept output, or the
    failing test's report when the runner printed one (jobs/notes/annotations.py)."""
    text = kept.decode("utf-8", errors="replace")
    lines = text.removesuffix("\n").split("\n")
    lines = lines[1:] if dropped and len(lines) > 1 else lines  # the first kept may be partial
    chosen = choose_tail(lines, limit=TAIL_LINES)
    tail = "\n".join(line.rstrip("\r")[:TAIL_LINE_CHARS] for line in chosen)
    if len(tail) > TAIL_TOTAL_CHARS:
        tail = tail[-TAIL_TOTAL_CHARS:].partition("\n")[2]
    return tail


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
    isolated: bool, should_stop: Callable[[], bool] | None = None, pass_fds: Sequence[int] = (),
) -> CommandResult:  # fmt: skip
    """Run `cmd` (the real argv, maybe wrapped) in its own session; kill its group at the end.
    `pass_fds` stay open in the child (e.g. bubblewrap's seccomp program)."""
    started = time.monotonic()
    read_end, write_end = os.pipe2(os.O_CLOEXEC)
    try:
        proc = subprocess.Popen(
            list(cmd), stdin=subprocess.DEVNULL, stdout=write_end, stderr=subprocess.STDOUT,
            cwd=cwd, env=env, start_new_session=True, close_fds=True, pass_fds=tuple(pass_fds),
        )  # fmt: skip
    except OSError as exc:  # lost a race with `which`, or not executable
        os.close(read_end)
        code = 127 if isinstance(exc, FileNotFoundError) else 126
        return not_run(argv, code, f"{program_name(argv[0])}: {exc.strerror}", isolated)
    finally:
        os.close(write_end)
    sink = OutputSink(read_end)  # the output is streamed, never stored whole (caps.py)
    ended = "exited"
    try:
        ended = _wait(proc, timeout, should_stop)
    finally:
        # Kill whatever is left in the group (background children, or everything on
        # timeout) while the leader is still unreaped, so the group id cannot be reused.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        exit_code = proc.wait()
        kept, lines, dropped = sink.finish()
    duration = time.monotonic() - started
    tail = _tail(kept, dropped=dropped)
    return CommandResult(
        argv=tuple(argv), exit_code=exit_code, duration_s=duration, output_tail=tail,
        output_lines=lines, timed_out=ended == "timeout", isolated=isolated,
        cancelled=ended == "stopped", output_log=sink.log(kept),
    )  # fmt: skip


def not_run(argv: Sequence[str], code: int, message: str, isolated: bool) -> CommandResult:
    return CommandResult(tuple(argv), code, 0.0, message, 1, False, isolated)
