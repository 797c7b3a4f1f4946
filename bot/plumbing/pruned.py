"""What is left of a job retention removed (`pruned:<id>`, and `pruned-issue:<repo>#<n>` naming
it by issue; written by bot/server/retention.py), read back so that the task center, the API
and `stepwise status --server` answer "ended and pruned after N days" instead of "no such job"."""

from __future__ import annotations

from dataclasses import dataclass

from redis import Redis

from bot.plumbing.connections import as_document, as_text
from bot.plumbing.keys import pruned_issue_key, pruned_key

MARKER_TTL_S = 365 * 24 * 3600  # how long "ended and pruned" is answered for a pruned job


@dataclass(frozen=True)
class Pruned:
    """What is left of a pruned job: enough to say what it was and when it went."""

    job_id: str
    repo: str
    number: int
    status: str
    ended_at: str
    pruned_at: str
    days: int

    def message(self) -> str:
        return (f"Job {self.job_id} ({self.repo}#{self.number}) ended ({self.status}) on "
                f"{self.ended_at[:10]} and was pruned after {self.days} days "
                "(STEPWISE_RETAIN_ENDED_DAYS): its record is no longer kept")


PRUNED_HINT = ("Its commits, comments and pull request are still on GitHub; label the issue "
               "again to start a new job")


def pruned(connection: Redis, job_id: str) -> Pruned | None:
    """What is left of job `job_id` if retention removed it, else None."""
    doc = as_document(connection.get(pruned_key(job_id)))
    if doc is None:
        return None
    try:
        return Pruned(job_id=job_id, repo=str(doc["repo"]), number=int(doc["number"]),
                      status=str(doc["status"]), ended_at=str(doc["ended_at"]),
                      pruned_at=str(doc["pruned_at"]), days=int(doc["days"]))
    except (KeyError, TypeError, ValueError):
        return None


def pruned_for_issue(connection: Redis, repo: str, number: int) -> Pruned | None:
    """The pruned job that was the latest of `repo#number`, if retention removed it."""
    job_id = as_text(connection.get(pruned_issue_key(repo, number)))
    return pruned(connection, job_id) if job_id else None
