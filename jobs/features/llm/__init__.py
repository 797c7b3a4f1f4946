"""The llm recipe's ties to the loop (README "Recipe llm"; the recipe itself is jobs/recipes/llm).

Contract: a job whose recipe is `llm`, or a `command` with the `llm` fallback, needs a model
endpoint before it is created (`STEPWISE_LLM_*`, or the CLI's `--llm-*`; missing: exit 2,
`llm_not_configured`); its plan names the edit format the model will use. Each attempt lends the
editor what it works with: a check of the candidate in place (the runner's own guard, setup,
validation and completion check), a restore, the count of every model call against the job, the
previous attempt's failure as feedback, and where the attempt's transcript goes (recorded on the
attempt however the edit ended). When the job's token budget is spent the batch waits at the
`budget` gate (exit 4): `approve` grants one more budget when the batch runs again, `skip`
skips it. An issue without a spec block can have its spec drafted by the model (a job marked
`untrusted_spec`, so it waits at the `plan` gate).

- Config: the repository's `llm:` block (jobs/inputs/llm_config.py); the endpoint, model, key and
  budget are the process's `STEPWISE_LLM_*` (jobs/recipes/llm_settings.py: a neutral module, as
  the engine's `Services.llm` and the editor factory's signature name its type).
- Record: its part, `Job.parts["llm"]` (usage.py `LlmUsage`, read with `usage(job)`, each
  model call counted by `record_usage`): calls, tokens, grants, the open budget gate's batch,
  the edit format. Records of earlier releases kept it as the job's
  field `llm`, read into the part. Others read its totals as figures (`MODEL_TOKENS_IN`, ...:
  the forecast, the metrics). Each attempt's `llm_calls` and `transcript` stay in
  jobs/kernel/records.py (the attempt record types them).
- Gate: `budget` (budget.py, its row in the gate and pass tables; the kind records store).
- Plan and note: the plan's "Model edits" line and the change note's "Model usage" section
  (note.py); `stepwise llm-report` (statistics.py).
- Hooks (wiring.py, active for llm jobs only): `start_check`, `planned`, `edit` (edit_hooks.py),
  and the batch hook that settles an answered `budget` gate.
- Modules: budget.py, note.py, statistics.py and usage.py are pure; start.py, draft.py and
  edit_hooks.py are the engine side.
"""
