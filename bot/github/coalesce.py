"""Fewer writes per batch (part of the GitHub adapter): GitHub allows an installation 80
content-creating requests a minute and 500 an hour, and a batch would otherwise edit the pull
request's body (the card) and move the `Stepwise` check run to its new head every time.

While a job works through batches (running, no gate, no CI wait), the card and the job's check
run are sent at most once every COALESCE_S: a publication inside the window stays owed in the
record (the outbox), its text replaced by the next one, so the one finally sent is the newest and
the intermediate ones cost nothing. At a gate, a CI wait or the end they go at once, and the
reconciler sends what is still owed after the window. The card is never sent unchanged.

What was sent when is kept in the record's `server.comments` (marker key -> int) under keys no
comment uses (`~sent-at:<key>`: epoch seconds; `~digest:<key>`: 60 bits of the text's sha-256):
a record an older worker reads during a rolling upgrade has no field it does not know.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime

from jobs.kernel import outbox
from jobs.kernel.job import Job
from jobs.kernel.model import JobStatus

COALESCE_S = 60.0
SENT_AT, DIGEST = "~sent-at:", "~digest:"  # keys of `server.comments` no comment uses
CARD = "card"
JOB_CHECK_SUFFIX = ":job"


def _coalescible(job: Job, key: str, text: str) -> bool:
    if job.status is not JobStatus.RUNNING or job.gate is not None or job.awaited() is not None:
        return False
    if key == CARD:
        return job.server.pull is not None  # opening the pull request is never put off
    if key.startswith(outbox.CHECK_PREFIX) and key.endswith(JOB_CHECK_SUFFIX):
        try:
            body = json.loads(text)
        except ValueError:
            return False
        return isinstance(body, dict) and body.get("status") != "completed"
    return False


def put_off(job: Job, key: str, text: str, now: datetime) -> bool:
    """Whether publishing `key` now waits: a working job's card or job check sent less than
    COALESCE_S ago."""
    last = job.server.comments.get(SENT_AT + key)
    return (last is not None and now.timestamp() - last < COALESCE_S
            and _coalescible(job, key, text))


def sent(job: Job, key: str, now: datetime) -> None:
    if key == CARD or (key.startswith(outbox.CHECK_PREFIX) and key.endswith(JOB_CHECK_SUFFIX)):
        job.server.comments = {**job.server.comments, SENT_AT + key: int(now.timestamp())}


def digest(text: str) -> int:
    return int(hashlib.sha256(text.encode()).hexdigest()[:15], 16)


def unchanged(job: Job, key: str, text: str) -> bool:
    """Whether `text` is what GitHub shows for `key` already (as Stepwise last sent it)."""
    return job.server.comments.get(DIGEST + key) == digest(text)


def remember(job: Job, key: str, text: str) -> None:
    job.server.comments = {**job.server.comments, DIGEST + key: digest(text)}
