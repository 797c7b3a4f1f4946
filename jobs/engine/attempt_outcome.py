"""What one attempt came to and what it leaves: the outcome (`AttemptOutcome`), the failures an
attempt reports, the stop of an edit at a feature's gate (`EditGated`); what a committed batch
changed (and for a `command` job what its codemod reported); and what a failed validation leaves
for a human: the commands' whole output (as far as the sandbox kept it: its head and tail) and the
diff that was tried, as files under the job's artifacts,
`<state_dir>/artifacts/issue-<N>/attempts/<batch>-<attempt>/`:
    output.log    each command of the run, `$ command`, its output, `[exit N]`
    attempt.diff  the staged diff of the attempt against the job's head
Both are redacted (jobs/basics/redact.py) and capped at ARTIFACT_BYTES (the end is kept: it
is where runners print their summary). The failure report names them, so the gate, `status`
and the note point at them.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from jobs.adapters.sandbox_view import REPO_MOUNT
from jobs.basics.errors import ErrorInfo, RetryClass
from jobs.basics.redact import redact
from jobs.decisions.network_failure import network_cause
from jobs.inputs.caps import ARTIFACT_BYTES
from jobs.inputs.recipes import rules_for
from jobs.inputs.sandboxing import CommandResult
from jobs.kernel.job import Batch, Job
from jobs.kernel.records import Attempt, CommandEvidence, line_text
from jobs.notes.note_parts import codemod_findings, codemod_summary, target_key
from jobs.ports import Workspace


class Result(StrEnum):
    COMMITTED = "committed"
    SKIPPED = "skipped"
    FAILED = "failed"
    GATED = "gated"


@dataclass
class AttemptOutcome:
    result: Result
    commit: str | None = None
    reason: str = ""
    gate: str | None = None  # a kind of the gate table (jobs/kernel/model.py GATES)
    error: ErrorInfo | None = None
    leftovers: list[str] = field(default_factory=list)
    touched: list[int] = field(default_factory=list)  # other batches this attempt changed
    changed: list[str] | None = None  # the paths the commit changed, when the attempt knows
    tree: str | None = None  # the edited tree that failed validation (what a split bisects)


class EditGated(Exception):
    """A feature's `edit` hook stopped the attempt at its gate (llm: the `budget` gate, the token
    budget spent): the batch waits there; not a failure."""

    def __init__(self, gate: str, reason: str) -> None:
        super().__init__(reason)
        self.gate, self.reason = gate, reason


def failed_outcome(code: str, retry_class: RetryClass, message: str, hint: str,
             evidence: dict[str, object] | None = None) -> AttemptOutcome:
    info = ErrorInfo(code=code, retry_class=retry_class, message=message, hint=hint,
                     evidence=dict(evidence or {}))
    return AttemptOutcome(Result.FAILED, error=info, reason=message)


def command_failed_outcome(code: str, failed: CommandEvidence, what: str) -> AttemptOutcome:
    """A failed setup or validation command; the network's part first when it is the cause."""
    timed = " (timed out)" if failed.timed_out else ""
    cause = network_cause(failed, who="setup" if code == "setup_failed" else "validation")
    return failed_outcome(
        code, RetryClass.NEEDS_HUMAN,
        (f"{cause.what}; " if cause is not None else "")
        + f"{what}: `{failed.display}` exited {failed.exit_code}{timed}",
        f"{cause.fix}; then retry or skip the batch" if cause is not None else
        "read the output tail; fix the code or the spec, then retry or skip the batch",
        {"command": failed.display, "exit_code": failed.exit_code,
         "output_tail": failed.output_tail, "output_lines": failed.output_lines},
    )


def with_line_texts(repository: Workspace, commit: str | None,
                    findings: list[str]) -> list[str]:
    """Each `path:line — message` finding with the text of its line in `commit` appended."""
    parsed = [target_key(item) for item in findings]
    if commit is None or not findings:
        return findings
    texts = repository.read_texts(commit, sorted({path for path, _, _ in parsed}))
    shown = []
    for item, (path, line, _) in zip(findings, parsed, strict=True):
        text = line_text(texts.get(path), line)
        shown.append(f"{item} (the line: {text})" if text else item)
    return shown


def record_changes(repository: Workspace, job: Job, batch: Batch, attempt: Attempt,
                   changed: list[str] | None = None) -> None:
    """Note the files the batch's commit changed (`changed` when the attempt staged and
    committed them itself: the commit is exactly that diff against its parent); a `command`
    batch's summary says in words what the codemod reported, and the findings it printed
    become leftovers."""
    changes = repository.changes(None, batch.commit) if batch.commit is not None and (
        changed is None or rules_for(job.spec.recipe).reports_findings) else {}
    batch.changed_files = sorted(changed if changed is not None else changes)
    if not rules_for(job.spec.recipe).reports_findings or not attempt.commands:
        return
    codemod = attempt.commands[0]  # the edit's command comes before validation's
    worktree = repository.state_dir / "worktrees" / f"issue-{job.number}"
    findings = with_line_texts(repository, batch.commit, codemod_findings(
        codemod.output_tail, batch.files, roots=(str(REPO_MOUNT), str(worktree))))
    batch.leftovers = sorted({*batch.leftovers, *findings}, key=target_key)
    deleted = sorted(path for path, status in changes.items() if status == "D")
    codes = job.spec.options().get("changed_exit_codes") or []
    batch.summary = codemod_summary(codemod, changed=batch.changed_files,
                                    planned=len(batch.files), findings=len(findings),
                                    deleted=deleted, changed_exit_codes=codes)


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
