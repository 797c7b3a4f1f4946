"""Chaos run: exactly-once batches through killed workers, a Redis restart, GitHub faults and
duplicated deliveries (issue 4, "Evidence to produce"; docs/reliability.md says what each proves).

    .venv/bin/python -m tests.kit.chaos                 # 20 kill trials, then the others (~8 min)
    .venv/bin/python -m tests.kit.chaos --quick         # 3 kill trials, most others once (~2 min)
    .venv/bin/python -m tests.kit.chaos --trials 40 --seed 7 --verbose --markdown

Everything runs on 127.0.0.1: a real redis-server (append-only file on) started here on a free
port in a temporary directory; two real `stepwise worker` processes (RQ workers with the
scheduler); the loopback FakeGitHub of tests/kit in this process (bare git repositories are
the remotes); the web app served by uvicorn in a thread, receiving signed webhooks over HTTP.

Each trial is one job on a fresh repository: 12 files that each need one replacement,
`batch_size: 1`, one milestone, `require_plan_approval: false` (true in `duplicates`), each
batch validated by `python -m unittest discover -s tests -q` (a 12-test suite) in the sandbox.
Timings are shortened so a trial takes seconds: STEPWISE_LEASE_TTL_S=2,
STEPWISE_REAP_INTERVAL_S=1, STEPWISE_RECONCILE_INTERVAL_S=5, STEPWISE_BACKOFF_S=[0.5,1,2],
STEPWISE_CALL_BACKOFF_S=[0.2,0.4,0.8] (production: 30 s, 20 s, 20 s, 5/15/45 s, 0.5/1/2 s; the
faults-prod scenario runs with those).

Scenarios (docs/reliability.md says what each one proves):
  baseline       no faults: the control, and the job duration the kill moments are drawn from
  kill           a fresh installation per trial; the worker advancing the job is killed with
                 everything it started (SIGSTOP then SIGKILL of its process tree and group) at
                 a uniform random moment of the expected duration, or (every third trial) right
                 after a batch reached the remote branch, i.e. between the push and the record
                 write; the worker is restarted at once
  kill-survivor  the killed worker is not restarted: the surviving one must finish the job;
                 odd trials kill the worker running RQ's scheduler, even ones the other
  kill-label     the worker handling the `labeled` webhook is killed mid-event and restarted
                 at once: while it waits for GitHub (a call answered 3 s late makes the moment
                 certain), or as the repository's first clone begins; when no job appeared,
                 the maintainer redelivers the webhook (same delivery id)
  redis-restart  SIGTERM redis-server mid-job (it flushes the append-only file), start it again
                 on the same port and directory; workers that exited are restarted and reported
  no-faults      the control of the fault scenarios: the same job and maintainer, no faults
  faults         20% of GitHub calls, on every endpoint (the installation-token endpoint and
                 comment posting included), fail: 502 or a secondary rate limit (403 +
                 Retry-After: 1) before the call is handled, or, for a third of the faults on
                 writes, 502 after it was ("done, then 502"). Each job stops at the plan gate
                 and a milestone gate; the maintainer answers a gate only once its comment
                 exists on GitHub (approve; retry at a failure gate from a transient fault)
  faults-api     the same with the token endpoint spared
  faults-prod    one faults trial with the production lease, reaper, reconciler and backoff
  duplicates     every webhook delivered twice at once (same X-GitHub-Delivery), every command
                 comment delivered once more under a second delivery id; the plan is approved
                 by such a comment

Per scenario: trials, jobs completed, batches committed, duplicate batch commits (a batch number
in more than one commit of the job on the remote branch, from the Stepwise-Batch trailers; plus
duplicate jobs, pull requests and marked comments), lost batches, stuck jobs (neither ended nor
at a gate after the timeout, 120 s, or at a gate whose comment never appeared), the median time
to recover (from the kill or the Redis restart to the job's next recorded progress: one more
finished batch, a gate or the end), the median time to finish against the no-fault control,
and the slowest gate: from its opening to its comment appearing on GitHub.
Exit status: 0 when no scenario has a duplicate, a lost batch, a stuck job or a gate its step
left unpublished that no reconciler pass took up within one interval, and every faulted
scenario finishes within 3x its control.

The package, one module per job: `settings.py` (names, timings, limits), `sample.py` (the
sample repository and issue), `redis_proc.py` (a restartable redis-server), `github.py` (the
fake GitHub with faults), `killing.py` (freezing and killing a process tree), `workers.py`
(the worker processes), `cluster.py` (the whole installation), `watch.py` (waiting for a job
to settle), `trial.py` (checking a finished trial), `results.py` (a scenario's results and
table), `kills.py` and `scenarios.py` (the scenarios), `command.py` (the command line;
`__main__.py` runs it).
"""
