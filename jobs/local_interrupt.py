"""Local mode after Ctrl-C: the job is recorded as interrupted, and the message says where it
stands and how to resume it (`stepwise run` again, or `approve`/`retry`)."""

from __future__ import annotations

from jobs.kernel.model import FINISHED_BATCH_STATUSES, BatchStatus
from jobs.local import LocalSession

EXIT_INTERRUPTED_BY_USER = 130  # what a shell reports for a process ended by SIGINT


def interruption_message(session: LocalSession) -> str:
    """Where the job stands after Ctrl-C, and the command that resumes it."""
    job = session.store.load(session.number)
    if job is None:
        return "Interrupted (Ctrl-C) before the job was recorded; nothing was changed."
    job = session.mark_if_dead(job)
    done = sum(1 for b in job.batches if b.status is BatchStatus.COMPLETED)
    pending = next((b.number for b in job.batches if b.status not in FINISHED_BATCH_STATUSES),
                   None)
    if job.is_terminal:
        where = f"it is {job.status}"
    elif job.gate is not None:
        where = f"it waits at gate {job.gate.kind}"
    elif not job.batches or job.approved_digest is None:
        where = "it was planning (no batch had started)"
    else:
        at = f"batch {pending} of {len(job.batches)}" if pending else "the final review"
        kept = "1 committed batch is kept" if done == 1 else f"{done} committed batches are kept"
        where = f"it was at {at}; {kept}"
    resume = f"stepwise approve{session.suffix}" if not job.is_terminal else ""
    again = f" Resume it with `{session.run_command(job)}` or `{resume}`." if resume else ""
    return f"Interrupted (Ctrl-C): job #{job.number} stopped; {where}.{again}"
