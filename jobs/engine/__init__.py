"""The engine: the loop that advances a job, and the steps it runs; it applies what the pure rooms
decide and reaches the outside only through the ports (jobs/ports.py).

- `engine.py`: the loop: a status -> handler table, and `SAFE_POINT` (a cancel asked for), after
  which the features' hooks run in the order of the features' tuple (jobs/composition.py).
- `context.py`: what every step works with: the record, the services, the worktree, opening a
  gate; `Feature` and its named hook points (safe point, after push, committed, adopt, before a
  milestone ends, after revert, at end, after the steps, the batch hooks, the edit, the
  environment, the planned and start checks, the validation and the verdict before a commit).
- `validation_hooks.py`: what a feature adds to a batch's validation (a probe around the run:
  coverage) and the verdict just before its commit (the evidence's gates).
- `discovery.py` (the job's scope at a commit and its `find` matches, read through the
  `Workspace` port: `git grep` picks the files worth reading, `re` finds the lines).
- `start.py` (a new job and where it starts), `planning.py` (the work planned, the base's version
  from git for the version tools), `baseline.py` (the starting commit validated, a failed baseline
  run again), `batch_run.py` (a batch's attempt and its record, milestone gates), `attempt.py` (one
  batch attempt) with `attempt_outcome.py` (what an attempt came to and leaves: what a committed
  batch changed, a failed validation's whole output and tried diff kept as files) and
  `failure_check.py` (a failed validation's failing tests run again on the batch and its
  parent, to tell whose failure it is).
- `branch_sync.py` (the branch's commits gathered, `reconcile` applied, the accepted commits by
  people read from git); `review.py` (the final review's evidence),
  `revert.py`, `endings.py` (failed, cancelled), `note_commit.py`, `recover.py`.
- `scope_preview.py` (what a job would plan, found without starting it: a campaign's preview),
  `usecases.py` (what local and server mode share: steer with a verb, instruct, revert, status,
  reload the config; each mode wires only saving and carrying on).

Contract: the engine never imports a feature nor the llm recipe, the store's or the sandbox's
adapters (import contracts); a step loads the record once and saves once per durable change.
"""
