"""The use cases local and server mode share: steer a job with a verb, add an instruction,
revert a batch. Starting is `start.create_job` and advancing `Engine.advance`, in both modes.

Each use case decides once (what applies, what is refused and why) and leaves the wiring to
the mode: `Wiring` saves the record and carries the job on (local mode: runs the engine now;
the server: queues the next task).
"""

from __future__ import annotations

from typing import Protocol

from jobs.domain.gates import RefusedError, Verb, apply_verb
from jobs.domain.model import Job

INSTRUCT_HINT = "instructions apply to later batches of a live job"


class Wiring(Protocol):
    """What differs between local and server mode."""

    def save(self, job: Job) -> None:
        """Store the changed record."""
        ...

    def advance(self, job: Job) -> None:
        """Carry the job on (its next step, or the end of a cancelled job)."""
        ...

    def revert(self, job: Job, batch: int) -> None:
        """Revert one batch (now, or by queueing it)."""
        ...


def steer(wiring: Wiring, job: Job, verb: Verb, *, reason: str = "") -> str:
    """Answer the open gate with `verb` (or cancel), save, and carry on; what happened.
    Raises RefusedError, changing nothing, when the verb does not apply."""
    message = apply_verb(job, verb, reason=reason)
    wiring.save(job)
    wiring.advance(job)
    return message


def instruct(wiring: Wiring, job: Job, text: str) -> str:
    """Add a standing instruction for the later batches; refused on a job that has ended."""
    text = text.strip()
    if not text:
        raise RefusedError("`instruct` needs the instruction text",
                           hint="e.g. stepwise instruct \"keep the public names\"")
    if job.is_terminal:
        raise RefusedError(f"the job is already {job.status}", hint=INSTRUCT_HINT)
    job.instructions.append(text)
    wiring.save(job)
    return f"instruction recorded ({len(job.instructions)} standing)"


def revert(wiring: Wiring, job: Job, batch: int) -> None:
    """Revert batch `batch` with a new commit (refusals come from jobs/domain/verdicts.py)."""
    wiring.revert(job, batch)
