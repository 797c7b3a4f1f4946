"""The workers (RQ tasks) and the wiring that builds the engine with its features for a job:

- `worker.py`: the task table, the function RQ runs (found by its stable entry-point name), the
  loop that rides out Redis outages, which RQ worker class runs the steps, the health probe
  (`stepwise worker --check`); `heartbeat.py` (each worker's beat, and the data marker that
  tells a Redis that lost its data), `recovery.py` (the jobs GitHub shows, rebuilt then),
  `redeliveries.py` (deliveries GitHub could not make, asked again through the App's API).
- `context.py`: the server's composition root: the engine's services for a job (its mirror,
  forge, environment cache) with the features of jobs/composition.py.
- `handlers.py`: the event tasks (labels, closes, reopenings, edits, pushes); `start_job.py` (a job
  started from the label or `/stepwise retry-start`), `comments.py` (comment commands, applied once
  each), `rebuild.py` (the job an event is about, found, or rebuilt from GitHub when lost),
  `resume.py` (an ended job carried on, and the offer to when its issue or pull request is
  reopened), `config_check.py` (the `Stepwise config` check run on a push changing the config),
  `check_rerun.py` ("Re-run" pressed on one of Stepwise's check runs: published again).
- `steer.py`: the one steer path: a comment command, a campaign acting on its jobs and a close
  all steer a job through `steer`, which decides who may and applies the verb.
- `steps.py`: the step task (one step of a job under its lease), revert, cancel;
  `rate_limits.py` (waiting for GitHub's rate limits without a worker).
- `reaper.py` (unleased jobs queued again), `reconciler.py` (publishes what GitHub has not
  confirmed), `retention.py` (ended jobs leave Redis after `STEPWISE_RETAIN_ENDED_DAYS`),
  `installations.py` (uninstalls end their jobs), `uninstall_files.py` (and delete their
  clones, worktrees, artifacts and transcripts), `confirmations.py` (uninstalls, suspensions,
  removals and closes confirmed with GitHub before they act), `suspensions.py` (a suspended installation
  parks its jobs; unsuspended, they resume), `ci_events.py` (CI webhooks wake the jobs waiting
  on that commit), `ci_poll.py` (the reconciler reads the CI of waits whose webhook may be lost).
- `plug.py`: what a mode-level feature (no part of a job's loop) plugs into the server: hooks
  for a label, its issue's closes, reopenings and edits, the reconciler pass, its comment verbs;
  `plugs.py`: the plugs, one line each (the tasks above ask their hooks, never name them).
- `campaigns/`: campaigns in server mode, plugged in by `campaigns/plug.py`.

Contract: a task takes its job's lease before it changes the record, reads the record once and
saves it once per durable change; the web app never imports this folder.
"""
