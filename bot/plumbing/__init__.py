"""Redis plumbing, below both the web app and the workers: every Redis key (keys.py, the one
place a key is spelled), the clients per role (connections.py), the job store over Redis and
the reconciler's idle index, the campaign records, RQ's `stepwise` queue and how a task is
queued or found abandoned (queue.py), leases and per-repository slots (leases.py), and the
small marks both sides read: suspended installations, pruned jobs, trigger labels.

Contract: this room imports only bot.events, bot.github.errors-free values, jobs' records and
codecs, and Redis/RQ; never bot.server, bot.web, bot.taskcenter or bot.observability (the
`bot` layers contract in pyproject.toml)."""
