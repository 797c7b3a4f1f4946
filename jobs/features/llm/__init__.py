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
- Record: `Job.llm` (calls, tokens, grants, the open budget gate's batch, the edit format) and
  each attempt's `llm_calls` and `transcript` (jobs/kernel/records.py: the kernel record types
  them, so stored records load without the feature).
- Gate: `budget` (budget.py, its row in the gate and pass tables; the kind records store).
- Plan and note: the plan's "Model edits" line and the change note's "Model usage" section
  (note.py); `stepwise llm-report` (statistics.py).
- Hooks (wiring.py, active for llm jobs only): `start_check`, `planned`, `edit` (edit_hooks.py),
  and the batch hook that settles an answered `budget` gate.
- Modules: budget.py, note.py and statistics.py are pure; start.py, draft.py and
  edit_hooks.py are the engine side.
"""
