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
  session:<id>          a task-center session (a login), until it expires or its logout
  delivery-body:<sha256> a delivery body already taken, whatever its id (a replay, thirty days)
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
  installation:<id>     what the App knows of an installation (account, last action, when);
                        installations:log the last actions; installation:<id>:suspended the
                        mark of a suspended installation (who, since when);
                        installation:<id>:removed (installation:<id>:removed:<repo>) the mark
                        of an uninstall (a repository's removal): no clone is made again
  trigger-label:<repo>  the trigger label a worker last read from the config (an hour);
                        campaign-label:<repo> the campaign label
  reconcile:round       one reconciler pass per interval, whichever worker; reconcile:after:<kind>
                        the last job id a pass took, per kind of work
  retention:round       one retention pass per interval; retention:after the creation time a
                        pass got to
  workers:beats         a sorted set: each live worker's name by its last heartbeat (seconds);
                        workers:states its state (idle, busy) and host, as `state host`
  redeliver:round       one pass over the App's failed deliveries per interval; redelivered:<guid>
                        a failed delivery asked again lately (not asked again while it lasts);
                        redelivery-asks:<guid> how often it was asked (a day)
  data-marker           set once in a Redis that holds Stepwise's data: a worker that finds it
                        missing knows Redis lost its data (bot/server/heartbeat.py)

Lease and lock names (inside `lease:` and `lock:`), the running lines of an installation, and
RQ's task ids (RQ keeps a task under `rq:job:<id>`) are spelled here too: see the functions
below. This module is the only place a key is spelled (tests/bot/plumbing/test_keys.py).
"""

from __future__ import annotations

import re

PREFIX = "stepwise:"
JOBS = f"{PREFIX}jobs"
METRICS = f"{PREFIX}metrics:"
CAMPAIGNS = f"{PREFIX}campaigns"
ALL_CAMPAIGNS = f"{PREFIX}campaigns:all"
INSTALLATIONS_LOG = f"{PREFIX}installations:log"
RECONCILE_ROUND = f"{PREFIX}reconcile:round"
RETENTION_ROUND = f"{PREFIX}retention:round"
RETENTION_CURSOR = f"{PREFIX}retention:after"
WORKER_BEATS = f"{PREFIX}workers:beats"
WORKER_STATES = f"{PREFIX}workers:states"
DATA_MARKER = f"{PREFIX}data-marker"
REDELIVER_ROUND = f"{PREFIX}redeliver:round"


def github_writes_key(installation: str) -> str:
    """An installation's write budget (bot/github/write_budget.py): a sorted set of write times,
    with its bucket's `:tat` and `:seq` beside it."""
    return f"{PREFIX}github-writes:{installation}"


def github_limited_key(installation: str) -> str:
    """Until when GitHub rate-limited an installation (bot/github/limited.py)."""
    return f"{PREFIX}github-limited:{installation}"


def redelivered_key(guid: str) -> str:
    return f"{PREFIX}redelivered:{guid}"


def redelivery_asks_key(guid: str) -> str:
    return f"{PREFIX}redelivery-asks:{guid}"


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


def session_key(session_id: str) -> str:
    return f"{PREFIX}session:{session_id}"


def delivery_body_key(digest: str) -> str:
    return f"{PREFIX}delivery-body:{digest}"


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


def suspended_key(installation_id: int) -> str:
    return f"{PREFIX}installation:{installation_id}:suspended"


def removed_key(installation_id: int, repo: str | None = None) -> str:
    """The mark of an uninstall (`repo` None) or of a repository taken out of an installation."""
    tail = f":{repo}" if repo else ""
    return f"{PREFIX}installation:{installation_id}:removed{tail}"


def trigger_label_key(repo: str) -> str:
    return f"{PREFIX}trigger-label:{repo}"


def campaign_label_key(repo: str) -> str:
    return f"{PREFIX}campaign-label:{repo}"


def installation_key(installation_id: int) -> str:
    return f"{PREFIX}installation:{installation_id}"


def reconcile_cursor_key(kind: str) -> str:
    return f"{PREFIX}reconcile:after:{kind}"


def metric_key(name: str) -> str:
    return f"{METRICS}{name}"


# -- names inside `lease:`, `lock:`, `slots:` and `waiting:` -------------------------------------
def event_lease(delivery_id: str) -> str:
    """The lease name of the task handling one webhook delivery."""
    return f"event-{delivery_id}"


def start_lease(repo: str, number: int) -> str:
    """The lease name of a worker starting a job on issue `repo#number`."""
    return f"start-{repo}#{number}"


def rebuild_lock(repo: str, number: int) -> str:
    """The lock name of a worker rebuilding the lost record of issue `repo#number`."""
    return f"rebuild:{repo}#{number}"


def comment_lock(comment_id: int | str) -> str:
    """The lock name of a worker handling one comment."""
    return f"comment:{comment_id}"


def installation_line(installation_id: int | str) -> str:
    """The name of an installation's running and waiting lines (beside each repository's)."""
    return f"installation:{installation_id}"


# -- RQ task ids (RQ allows letters, digits, `_` and `-`) -----------------------------------------
def rq_id(*parts: str) -> str:
    """An RQ task id from free text."""
    return re.sub(r"[^A-Za-z0-9_-]+", "-", "-".join(parts)).strip("-")[:200]


def step_task_id(job_id: str, *why: str) -> str:
    """The id of a queued step of job `job_id` (`why`: its version, or what woke it). The
    `advance-` prefix is the step task's wire name: tasks queued by older versions carry it, and
    a step is not queued twice under one id."""
    return rq_id("advance", job_id, *why)


def event_task_id(delivery_id: str) -> str:
    return rq_id("event", delivery_id)


def cancelled_task_id(job_id: str) -> str:
    return rq_id("cancelled", job_id)


def reconcile_task_id() -> str:
    return rq_id("reconcile", "round")
