"""The use cases local and server mode share: steer a job with a verb, add an instruction,
revert a batch, tell a job's status. Starting is `start.create_job` and running its steps
`Engine.run`, in both modes.

Each use case decides once (what applies, what is refused and why) and leaves the wiring to
the mode: `Wiring` saves the record and carries the job on (local mode: runs the engine now;
the server: queues the next task).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from jobs.basics.voice import LOCAL, Voice, is_placeholder
from jobs.engine.context import outcome_of
from jobs.inputs.config import RepoConfig
from jobs.kernel.gates import RefusedError, Verb, apply_verb
from jobs.kernel.gates import reload_config as reload_job_config
from jobs.kernel.job import Job
from jobs.kernel.model import ACTIVE_JOB_STATUSES, JobStatus
from jobs.kernel.outbox import refused_note, waiting_note
from jobs.notes.progress import rate_limit_note

INSTRUCT_HINT = "instructions apply to later batches of a live job"


class Wiring(Protocol):
    """What differs between local and server mode."""

    def save(self, job: Job) -> None:
        """Store the changed record."""
        ...

    def go_on(self, job: Job) -> None:
        """Let the job go on (its next step, or the end of a cancelled job)."""
        ...

    def revert(self, job: Job, batch: int) -> None:
        """Revert one batch (now, or by queueing it)."""
        ...


def steer(wiring: Wiring, job: Job, verb: Verb, *, reason: str = "",
          files: Sequence[str] = (), by: str = "") -> str:
    """Answer the open gate with `verb` (or cancel) on behalf of `by`, save, and carry on; what
    happened. Raises RefusedError, changing nothing, when the verb does not apply."""
    message = apply_verb(job, verb, reason=reason, files=files, by=by)
    wiring.save(job)
    wiring.go_on(job)
    return message


def reload_config(wiring: Wiring, job: Job, config: RepoConfig, *,
                  source: str | None = None) -> str:
    """At the plan gate: take the config read again (local: the checkout; server: the default
    branch), save, and plan again with it, baseline included."""
    message = reload_job_config(job, config, source=source)
    wiring.save(job)
    wiring.go_on(job)
    return message


def instruct(wiring: Wiring, job: Job, text: str) -> str:
    """Add a standing instruction for the later batches; refused on a job that has ended."""
    text = text.strip()
    if not text or is_placeholder(text, "text"):
        raise RefusedError("`instruct` needs the instruction text" + (
            f", not its placeholder `{text}`" if text else ""),
            hint="e.g. {{instruct keep the public names}}")
    if job.is_terminal:
        raise RefusedError(f"the job is already {job.status}", hint=INSTRUCT_HINT)
    job.instructions.append(text)
    wiring.save(job)
    return f"instruction recorded ({len(job.instructions)} standing)"


def revert(wiring: Wiring, job: Job, batch: int) -> None:
    """Revert batch `batch` with a new commit (refusals come from jobs/decisions/verdicts.py)."""
    wiring.revert(job, batch)


class Progress(StrEnum):
    """What `status` tells of a job, beyond its recorded status."""

    WORKING = "working"  # a process (local) or a worker (server) is advancing it
    WAITING_OUTSIDE = "waiting_outside"  # running, waiting for something outside (CI; server)
    INTERRUPTED = "interrupted"  # what ran it is gone
    UNPUBLISHED = "unpublished"  # at a gate whose comment GitHub has not confirmed yet
    AT_GATE = "at_gate"
    ENDED = "ended"  # completed, failed, cancelled, or cancelling


EXIT_WORKING, EXIT_INTERRUPTED = 0, 4


@dataclass(frozen=True)
class StatusReport:
    progress: Progress
    exit_code: int  # 0 while it works; the gate's 3 or 4; 4 interrupted locally; 5; 1
    message: str  # one paragraph: what the job is doing and the next move


def status(job: Job, *, resume_command: str | None = None, voice: Voice = LOCAL) -> StatusReport:
    """What `job` is doing, as both modes' `status` tells it.

    `resume_command` is local mode's: there an interrupted job waits for someone to run it
    again (exit 4); without it (the server) a worker resumes it by itself, so it is working.
    Local mode first records a job whose process died as interrupted (`LocalSession`).
    """
    if job.status is JobStatus.INTERRUPTED:
        if resume_command is None:
            return StatusReport(Progress.INTERRUPTED, EXIT_WORKING,
                                f"job #{job.number} was interrupted (a worker stopped under it); "
                                "it resumes by itself, committed batches are kept")
        return StatusReport(Progress.INTERRUPTED, EXIT_INTERRUPTED,
                            f"job #{job.number} is interrupted: the process that ran it is gone "
                            f"(killed, or its terminal closed). Resume it with `{resume_command}`; "
                            "committed batches are kept")
    awaited = job.awaited() if job.waiting_outside else None
    if awaited is not None:
        return StatusReport(Progress.WAITING_OUTSIDE, EXIT_WORKING, awaited.says)
    if job.status in ACTIVE_JOB_STATUSES and job.status is not JobStatus.CANCEL_REQUESTED:
        return StatusReport(Progress.WORKING, EXIT_WORKING,
                            rate_limit_note(job) or f"job is {job.status}")
    outcome = outcome_of(job, voice=voice)
    if job.status is JobStatus.AWAITING_HUMAN and job.gate is not None:
        note = "\n".join(filter(None, (waiting_note(job), refused_note(job))))
        if note:
            return StatusReport(Progress.UNPUBLISHED, outcome.exit_code,
                                f"{note}\n\n{outcome.message}")
        return StatusReport(Progress.AT_GATE, outcome.exit_code, outcome.message)
    return StatusReport(Progress.ENDED, outcome.exit_code, outcome.message)
