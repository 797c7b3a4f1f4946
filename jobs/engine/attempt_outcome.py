"""What one attempt came to (`AttemptOutcome`), the failures an attempt reports, and the stop of
an edit at a feature's gate (`EditGated`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from jobs.basics.errors import ErrorInfo, RetryClass
from jobs.kernel.records import CommandEvidence


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
    timed = " (timed out)" if failed.timed_out else ""
    return failed_outcome(
        code, RetryClass.NEEDS_HUMAN,
        f"{what}: `{failed.display}` exited {failed.exit_code}{timed}",
        "read the output tail; fix the code or the spec, then retry or skip the batch",
        {"command": failed.display, "exit_code": failed.exit_code,
         "output_tail": failed.output_tail, "output_lines": failed.output_lines},
    )
