"""Fewer writes per batch (part of the GitHub adapter): GitHub allows an installation 80
content-creating requests a minute and 500 an hour, and a batch would otherwise edit the pull
request's body (the card) and move the `Stepwise` check run to its new head every time.

While a job works through batches (running, no gate, no CI wait), the card and the job's check
run are sent at most once every COALESCE_S: a publication inside the window stays owed in the
record (the outbox), its text replaced by the next one, so the one finally sent is the newest and
the intermediate ones cost nothing. At a gate, a CI wait or the end they go at once, and the
reconciler sends what is still owed after the window. The card is never sent unchanged.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime

from jobs.kernel import outbox
from jobs.kernel.job import Job
from jobs.kernel.model import JobStatus

COALESCE_S = 60.0
CARD = "card"
JOB_CHECK_SUFFIX = ":job"


def _coalescible(job: Job, key: str, text: str) -> bool:
    if job.status is not JobStatus.RUNNING or job.gate is not None or job.ci_wait is not None:
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
    last = job.server.sent_at.get(key)
    return (last is not None and (now - last).total_seconds() < COALESCE_S
            and _coalescible(job, key, text))


def sent(job: Job, key: str, now: datetime) -> None:
    if key == CARD or (key.startswith(outbox.CHECK_PREFIX) and key.endswith(JOB_CHECK_SUFFIX)):
        job.server.sent_at = {**job.server.sent_at, key: now}


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def unchanged(job: Job, key: str, text: str) -> bool:
    """Whether `text` is what GitHub shows for `key` already (as Stepwise last sent it)."""
    return job.server.sent_digest.get(key) == digest(text)


def remember(job: Job, key: str, text: str) -> None:
    job.server.sent_digest = {**job.server.sent_digest, key: digest(text)}
