"""The outbox: publications owed to GitHub, kept in the job's record until GitHub confirms them.

Pure changes to the record (no I/O): the GitHub forge owes an entry before it publishes, settles
it when GitHub answers, and leaves it (with the error) when GitHub fails; the reconciler
publishes whatever is still owed. A gate counts as shown only once its comment is confirmed
(`OpenGate.shown_at`); until then the card, `status` and the task center say it is waiting to be
published. Entries are rendered from the record when they are published, so one entry per key
is enough: the newest card, the open gate's comment, the summary.
"""

from __future__ import annotations

from datetime import datetime

from jobs.kernel.job import Job
from jobs.kernel.records import OutboxEntry

GATE_PREFIX = "gate:"
CHECK_PREFIX = "check:"  # check runs, by their external id (kept for when Stepwise posts them)
WAITING = "waiting to be published on GitHub"


def gate_key(gate_id: str) -> str:
    return f"{GATE_PREFIX}{gate_id}"


def entry(job: Job, key: str) -> OutboxEntry | None:
    return next((e for e in job.outbox if e.key == key), None)


def owe(job: Job, key: str, kind: str, *, now: datetime, text: str = "",
        retry_refused: bool = False) -> OutboxEntry:
    """Record that `key` must be published; an entry already owed keeps its age and tries.
    A new gate's comment replaces the comment of a gate that closed before it was shown.
    An entry GitHub refused stays refused (the reconciler never tries it again) unless
    `retry_refused`: a step publishing a new state gives it one new try."""
    if key.startswith(GATE_PREFIX):
        job.outbox = [e for e in job.outbox if not e.key.startswith(GATE_PREFIX) or e.key == key]
    found = entry(job, key)
    if found is None:
        found = OutboxEntry(key=key, kind=kind, since=now, text=text)
        job.outbox = [*job.outbox, found]
    elif text:
        found.text = text
    if retry_refused:
        found.refused = ""
    return found


def owed(job: Job) -> list[OutboxEntry]:
    """The entries still to publish (not those GitHub refused for good)."""
    return [e for e in job.outbox if not e.refused]


def refuse(job: Job, key: str, error: str) -> None:
    """GitHub refused `key` with an answer that asking again will not change: it is kept, with
    why, for the card and the task center, and no longer published by the reconciler."""
    found = entry(job, key)
    if found is not None:
        found.tries += 1
        found.refused = found.last_error = error[:300]


def refused_note(job: Job) -> str:
    """One line per publication GitHub refused for good (card, `status`, task center)."""
    gate = gate_key(job.gate.id) if job.gate is not None else None  # waiting_note tells that one
    return "\n".join(f"⚠️ GitHub refused to publish `{e.key}` and Stepwise will not try again "
                     f"until it changes: {e.refused}" for e in job.outbox if e.refused and e.key != gate)


def settle(job: Job, key: str, *, now: datetime) -> None:
    """GitHub confirmed `key`: it is no longer owed; a gate's comment makes the gate shown."""
    job.outbox = [e for e in job.outbox if e.key != key]
    gate = job.gate
    if gate is not None and key == gate_key(gate.id) and gate.shown_at is None:
        gate.shown_at = now


def failed(job: Job, key: str, error: str) -> None:
    """A try to publish `key` failed; it stays owed."""
    found = entry(job, key)
    if found is not None:
        found.tries += 1
        found.last_error = error[:300]


def drop_stale(job: Job) -> list[str]:
    """Forget gate comments of gates that are no longer open; returns the keys dropped."""
    current = gate_key(job.gate.id) if job.gate is not None else None
    stale = [e.key for e in job.outbox if e.key.startswith(GATE_PREFIX) and e.key != current]
    job.outbox = [e for e in job.outbox if e.key not in stale]
    return stale


def gate_waiting(job: Job) -> OutboxEntry | None:
    """The open gate's comment when GitHub has not confirmed it yet."""
    if job.gate is None or job.gate.shown_at is not None:
        return None
    return entry(job, gate_key(job.gate.id))


def waiting_note(job: Job) -> str:
    """One line for the card, `status` and the task center while the gate is not shown yet."""
    owed = gate_waiting(job)
    if owed is None:
        return ""
    if owed.refused:
        return (f"⚠️ GitHub refused the comment for gate `{job.gate.id if job.gate else ''}` and "
                f"Stepwise will not try again: {owed.refused}. The gate is open all the same: "
                "answer it with the command below.")
    tries = f" ({owed.tries} tr{'y' if owed.tries == 1 else 'ies'} so far" + (
        f"; last: {owed.last_error}" if owed.last_error else "") + ")" if owed.tries else ""
    return (f"⏳ The comment for gate `{job.gate.id if job.gate else ''}` is {WAITING}{tries}; "
            "Stepwise keeps trying.")
