"""Job environments: what the config's `setup` commands build, cached (README "Job
environments", DESIGN.md).

Contract: a job whose repository config has `setup` gets its environment before its first
command: found in the environment cache under its key, or built once by `setup` in the sandbox
(with the network when `network` is `setup` or `true`), in a scratch worktree at the job's base,
and kept. Every later command sees it read-only at the same paths, so it is never part of a diff
and no batch can change what the next job reuses. The key covers the setup commands, their
environment and network mode, the `cache_key` files (or the base commit) and the base branch,
and the toolchain; a rebuild records which input changed. A failing setup command fails the
attempt with `setup_failed`. Without a wired cache (or without bubblewrap), `setup` runs in the
job's worktree again after each reset instead (the engine's own fallback).

- Config: `setup`, `cache_key`, `network` (jobs/inputs/config.py); the cache's size is
  `STEPWISE_ENV_CACHE_MB`.
- Record: `Job.parts["environments"]` (record.py `EnvironmentRecord`: the key, whether it came
  from the cache, its entries, setup's evidence, why it was rebuilt or failed); records of
  earlier releases kept it as the job's field `environment`, read into the part.
- Port: the cache is an adapter (jobs/adapters/environments.py `EnvironmentCache`, wired into
  `Services.environments` by local mode and the server); the engine and this feature hold it as
  `jobs.ports.EnvironmentStore`.
- Hook (wiring.py, active for jobs with `setup` only): `environment`, which the attempt runner
  calls for the job's environment.
- Card section (texts.py): the plan's `Setup:` line, and why the environment was rebuilt.
- Parts (parts.py): the record part, the card section, and two kernel hooks: `baseline_inputs`
  (the environment's key is part of a recorded baseline's key) and `config_reloaded` (a config
  read again at the plan gate forgets the environment keyed from the former one).
- Modules: build.py (the key, the build in a scratch worktree, the record), record.py, parts.py,
  texts.py, wiring.py.
"""
