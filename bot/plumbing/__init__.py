"""Redis plumbing, below both the web app and the workers: every Redis key (keys.py, the one
place a key is spelled), the clients per role (connections.py), the job store over Redis and
the reconciler's idle index, the campaign records, RQ's `stepwise` queue and how a task is
queued or found abandoned (queue.py), leases and per-repository slots (leases.py), and the
small marks both sides read: suspended installations, pruned jobs, trigger labels.

Contract (the `bot` layers in pyproject.toml): of bot, this room imports only what lies below
it (bot.settings, bot.events, bot.log_context, bot.github); never the web app, the workers, the
task center or observability, which all stand on it."""
