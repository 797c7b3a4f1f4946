"""A command's merged output, read from a pipe while it runs and never stored whole.

Only the line count, the first OUTPUT_HEAD_BYTES and the last OUTPUT_KEPT_BYTES
(jobs/inputs/caps.py) are kept, in memory:
a command printing gigabytes costs neither disk nor memory. A process that outlives the
command and keeps the pipe open (possible without bubblewrap) cannot stall the reader: once the
command has ended, it takes what is already in the pipe and stops.
"""

from __future__ import annotations

import os
import select
import threading
import time

from jobs.inputs.caps import OUTPUT_HEAD_BYTES, OUTPUT_KEPT_BYTES

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
