"""How the App talks to people on GitHub, as pure functions of the job: who a gate mentions,
which comment a gate's text goes to, and what a comment says once something superseded it.

- The person who started the job (`job.server.started_by`) and the config's `approvers` are
  mentioned in every comment that asks them something (GitHub notifies on a new comment).
- Every new gate is a new comment, with one exception: a batch that fails again after a retry
  edits its `failure` comment with the new attempt instead of posting the report again.
- A comment that no longer holds (the queue position once planning started, a plan replaced by
  a later plan, a plan whose job was cancelled) is edited to say what superseded it.
"""

from __future__ import annotations

from jobs.kernel.job import Job, OpenGate
from jobs.kernel.model import Gate, JobStatus
from jobs.kernel.outbox import gate_key
from jobs.notes.progress import nothing_to_do
from jobs.notes.tally import leftover_words, outcome, tally

QUEUE_DONE = "Stepwise waited here for another job of this repository to finish; it has " \
    "started planning now (the plan follows in its own comment)."
PLAN_SUPERSEDED = "This plan was replaced by a later one: {where}. Answer that one."
PLAN_CANCELLED = "The job was cancelled, so this plan no longer waits for an answer."
RETRY_EDITS = ("Attempts so far: {attempts}. When a retry fails again, this comment is "
               "updated with the new attempt.")


def mentions(job: Job) -> str:
    """`@starter @approver @org/team`: everyone a gate asks, each once."""
    seen: dict[str, str] = {}
    for name in (job.server.started_by, *job.config.approvers):
        name = name.strip().removeprefix("@")
        if name:
            seen.setdefault(name.lower(), f"@{name}")
    return " ".join(seen.values())


def asking_line(job: Job) -> str:
    """The first line of a comment that asks for a decision (empty when nobody is known)."""
    who = mentions(job)
    return f"{who}: Stepwise needs your answer." if who else ""


def gate_slot(gate: OpenGate) -> str:
    """The marker key of the comment that shows `gate`: its own, except a batch's `failure`,
    which keeps one comment the retries edit."""
    if gate.kind is Gate.FAILURE and gate.batch is not None:
        return f"failure:batch-{gate.batch}"
    return gate_key(gate.id)


def retry_line(job: Job, gate: OpenGate) -> str:
    if gate.kind is not Gate.FAILURE or gate.batch is None:
        return ""
    return RETRY_EDITS.format(attempts=len(job.batch(gate.batch).attempts))


def plan_slot(gate_id: str) -> str:
    """The marker key of the comment of a plan asked after the first one."""
    return f"plan:{gate_id}"


def closing_head(job: Job) -> str:
    """The first paragraph of the summary posted when a job ends: how it ended (and who ended
    it), what it kept and where the note is, counted as every surface counts (`tally`)."""
    counted = tally(job)
    if job.status is JobStatus.COMPLETED and not job.batches:  # a re-plan found nothing
        where = f"in {job.repo} at {job.head_sha[:7]} (branch {job.base_branch})"
        return (f"Stepwise ended without a change: {nothing_to_do(job, where=where)}. No "
                "branch, change note or pull request was made.")
    ended = {JobStatus.CANCELLED: "was cancelled", JobStatus.FAILED: "failed"}
    head = f"Stepwise {ended.get(job.status, outcome(job, counted))}."
    if job.status is JobStatus.CANCELLED and job.server.cancelled_by:
        kept = "1 completed batch stays" if counted.committed == 1 else \
            f"{counted.committed} completed batches stay"
        head = (f"Stepwise was cancelled: {job.server.cancelled_by}. The {kept} on "
                f"`{job.branch}`.")
    pull = job.server.pull
    if job.status is JobStatus.COMPLETED:
        head += f" The change note is `{job.note_path}`"
        head += f" in #{pull.number}, now ready for review." if pull is not None else "."
    head += f"\n\n{counted.batches_line().capitalize()}; {counted.files_line()}."
    if counted.left_for_human:
        head += f" {leftover_words(counted)} in the change note."
    if job.error is not None:
        head += f"\n\nError `{job.error.code}` ({job.error.retry_class}): " \
                f"{job.error.message}\n\nHint: {job.error.hint}"
    return head
