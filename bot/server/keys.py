"""Every Redis key Stepwise names, all under `stepwise:` (RQ's own keys are RQ's).

  job:<id>              the job without its batches (JSON), carrying `version`
  job:<id>:batches      a hash: batch number -> batch JSON
  job:<id>:events       the job's event log, one JSON line per event
  issue:<repo>#<n>      the id of the latest job for that issue
  pull:<repo>#<n>       the id of the job whose pull request that is
  jobs                  a sorted set of job ids by creation time (the task center's index)
  lease:<name>          who advances a job (or handles a delivery) now, with its TTL
  lock:<key>            a short lock (a comment, a rebuild)
  slots:<repo>          the jobs of a repository running now; waiting:<repo> those in line
  comment:<id>          one comment's progress: commands applied, answers, done
  delivery:<id>         a webhook delivery already taken (dedupe, three days)
  ci:<repo>@<sha>       a set: the jobs waiting for the repository's CI on that commit
  idle:<kind>           a set: the jobs a reconciler pass looks at (owing, gate, ci), kept by
                        every save; idle:indexed marks that the sets were built
  metrics:<name>        the counters and histograms; metrics:seen:<job> what was counted
  comments-read:<id>    the reconciler's read-back cursor of one job's comments
  pruned:<id>           what is left of a job retention removed (JSON: repo, issue, status, when it
                        ended and was pruned), for a year; pruned-issue:<repo>#<n> its id by issue
  campaign:<repo>#<n>   a campaign's record, the issue <n> of its control repository: a hash of
                        its header (JSON), one field per repository and its running counters
  campaigns             a set: the campaign keys a reconciler pass ticks (not ended)
  campaigns:all         a sorted set: every campaign key by creation time (the task center)
"""

from __future__ import annotations

PREFIX = "stepwise:"
JOBS = f"{PREFIX}jobs"
METRICS = f"{PREFIX}metrics:"
CAMPAIGNS = f"{PREFIX}campaigns"
ALL_CAMPAIGNS = f"{PREFIX}campaigns:all"


def job_key(job_id: str) -> str:
    return f"{PREFIX}job:{job_id}"


def batches_key(job_id: str) -> str:
    return f"{job_key(job_id)}:batches"


def events_key(job_id: str) -> str:
    return f"{job_key(job_id)}:events"


def issue_key(repo: str, number: int) -> str:
    return f"{PREFIX}issue:{repo}#{number}"


def pull_key(repo: str, number: int) -> str:
    return f"{PREFIX}pull:{repo}#{number}"


def lease_key(name: str) -> str:
    return f"{PREFIX}lease:{name}"


def lock_key(key: str) -> str:
    return f"{PREFIX}lock:{key}"


def slots_key(repo: str) -> str:
    return f"{PREFIX}slots:{repo}"


def waiting_key(repo: str) -> str:
    return f"{PREFIX}waiting:{repo}"


def comment_key(comment_id: int | str) -> str:
    return f"{PREFIX}comment:{comment_id}"


def delivery_key(delivery_id: str) -> str:
    return f"{PREFIX}delivery:{delivery_id}"


def ci_key(repo: str, sha: str) -> str:
    return f"{PREFIX}ci:{repo}@{sha}"


def idle_key(kind: str) -> str:
    return f"{PREFIX}idle:{kind}"


def campaign_key(repo: str, number: int) -> str:
    return f"{PREFIX}campaign:{repo}#{number}"


def pruned_key(job_id: str) -> str:
    return f"{PREFIX}pruned:{job_id}"


def pruned_issue_key(repo: str, number: int) -> str:
    return f"{PREFIX}pruned-issue:{repo}#{number}"


def seen_key(job_id: str) -> str:
    return f"{METRICS}seen:{job_id}"


def comments_read_key(job_id: str) -> str:
    return f"{PREFIX}comments-read:{job_id}"
