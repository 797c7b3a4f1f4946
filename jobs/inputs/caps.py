"""Every cap on what Stepwise stores or keeps from untrusted code, in one place.

Repository code decides how much it prints, how many connections it asks for and how big the
files it leaves are; none of that may decide how much memory, disk or Redis Stepwise uses.
The adapters enforce these while they stream (jobs/adapters/sandbox_process.py, egress.py,
staging.py); docs/security.md lists each with its attack test.
"""

from __future__ import annotations

from collections.abc import Sequence

from jobs.basics.errors import RetryClass, StepwiseError
from jobs.basics.redact import redact

# Command output: only the line count and this many trailing bytes are ever kept (in memory,
# nothing spooled to disk), whatever the command prints.
OUTPUT_KEPT_BYTES = 64 * 1024
# ... and this many leading bytes, so a failed attempt's log (ARTIFACT_BYTES at most, with the
# attempted diff beside it) keeps the start of the output as well as its end.
OUTPUT_HEAD_BYTES = 256 * 1024
ARTIFACT_BYTES = 1024 * 1024
# Egress: tunnels recorded per command, and characters per record; the rest are counted.
EGRESS_RECORDS = 100
EGRESS_RECORD_CHARS = 300
# Egress tunnels: open at once per proxy (one command), and how long one may carry nothing.
EGRESS_CONNECTIONS = 64
EGRESS_IDLE_S = 120.0
# Staging: the largest file one batch may add or change, and all of a batch's files together.
STAGED_FILE_BYTES = 64 * 1024 * 1024
STAGED_BATCH_BYTES = 512 * 1024 * 1024


class FileTooLargeError(StepwiseError):
    """A command left a file (or a batch of files) too big to stage."""

    code = "file_too_large"
    retry_class = RetryClass.NEEDS_HUMAN

    def __init__(self, path: str, size: int, limit: int, *, batch: bool = False) -> None:
        what = "the batch's changed files together are" if batch else f"`{path}` is"
        super().__init__(
            f"{what} {size:,} bytes, over Stepwise's limit of {limit:,} bytes per "
            f"{'batch' if batch else 'file'}",
            hint="keep generated or binary files out of `paths` (or add them to `exclude`), "
                 "or make the codemod write smaller files; then retry or skip the batch",
            evidence={"path": path, "size": size, "limit": limit})


def egress_records(records: Sequence[str], *, dropped: int = 0) -> tuple[str, ...]:
    """At most EGRESS_RECORDS records (each cut to EGRESS_RECORD_CHARS and redacted), then one
    line counting the rest (`dropped` are those the proxy never kept)."""
    kept = [_cut(redact(record), EGRESS_RECORD_CHARS) for record in records[:EGRESS_RECORDS]]
    more = len(records) - len(kept) + dropped
    if more > 0:
        kept.append(f"... and {more:,} more tunnels not recorded")
    return tuple(kept)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
