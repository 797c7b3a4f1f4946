"""What a failed validation leaves for a human: the commands' whole output (as far as the
sandbox kept it: its head and tail) and the diff that was tried, as files under the job's
artifacts, `<state_dir>/artifacts/issue-<N>/attempts/<batch>-<attempt>/`:
    output.log    each command of the run, `$ command`, its output, `[exit N]`
    attempt.diff  the staged diff of the attempt against the job's head
Both are redacted (jobs/basics/redact.py) and capped at ARTIFACT_BYTES (the end is kept: it
is where runners print their summary). The failure report names them, so the gate, `status`
and the note point at them.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from jobs.basics.redact import redact
from jobs.inputs.caps import ARTIFACT_BYTES
from jobs.inputs.sandboxing import CommandResult

OUTPUT_LOG = "output.log"
ATTEMPT_DIFF = "attempt.diff"


def attempt_dir(state_dir: Path, number: int, batch: int, attempt: int) -> Path:
    return state_dir / "artifacts" / f"issue-{number}" / "attempts" / f"{batch}-{attempt}"


def log_entry(result: CommandResult) -> str:
    """One command's part of output.log."""
    output = result.output_log or result.output_tail
    ended = "timed out" if result.timed_out else f"exit {result.exit_code}"
    return f"$ {shlex.join(result.argv)}\n{output.rstrip()}\n[{ended}]\n"


def capped(text: str) -> str:
    data = text.encode("utf-8", errors="replace")
    if len(data) <= ARTIFACT_BYTES:
        return text
    kept = data[-ARTIFACT_BYTES:].decode("utf-8", errors="ignore").partition("\n")[2]
    return f"[… {len(data) - ARTIFACT_BYTES:,} bytes left out …]\n{kept}"


def write_attempt_artifacts(folder: Path, *, log: str, diff: str, root: Path) -> dict[str, str]:
    """Write both files into `folder`; their paths (relative to `root` when under it)."""
    folder.mkdir(parents=True, exist_ok=True)
    written = {}
    for name, key, text in ((OUTPUT_LOG, "output_log", log), (ATTEMPT_DIFF, "attempt_diff", diff)):
        path = folder / name
        path.write_text(capped(redact(text)), encoding="utf-8")
        try:
            written[key] = str(path.relative_to(root))
        except ValueError:
            written[key] = str(path)
    return written
