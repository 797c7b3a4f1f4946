"""CI as a verifier (DESIGN.md, "CI as a verifier"): the repository's own CI judges what a job
pushes, in server mode. Local mode has no CI; its plan says so.

Contract:
- Config: the `ci:` block of `.github/stepwise.yml` (`wait: per_milestone | per_batch | off`,
  `checks`, `timeout`). Its model, `CiConfig`, stays in jobs/inputs/ci_config.py because
  `RepoConfig` types it.
- Record: CI's part (record.py): `Job.parts["ci"]` (`CiJob`: the wait for CI on one commit,
  holding no worker, and each milestone head's verdict) and `Batch.parts["ci"]` (`CiBatch`: a
  batch commit's verdicts and the red checks that withdrew an attempt's commit, per_batch).
  Records of earlier releases kept them as `Job.ci_wait`, `Job.ci_results`,
  `Batch.ci_results` and `Attempt.ci_checks`; the part reads those. The kernel knows only
  that a part may hold the job waiting outside (jobs/kernel/record_parts.py `Awaited`): the
  server's CI index, poll and wake-up read that, never CI's fields. The forge's observations
  and the verdict (`CheckObservation`, `CiVerdict`) stay in jobs/decisions/ci.py because the
  forge port and the engine's batch hooks name them.
- Gate: `ci_failed` (exit code 4): a required check failed or timed out. `approve` accepts the
  red result (the note names it), `retry` re-runs the failed checks and waits again, `revert K`
  undoes a batch and waits for CI on the new head, `skip` (per_batch) withdraws the batch.
- Hooks (wiring.py), only for a job that waits or will (server mode, `ci.wait` not `off`):
  the safe point (while it waits, CI's verdict is the step), after push (per_batch: the batch
  is `awaiting_ci`), adopt (per_batch: an adopted batch commit waits too), before a milestone
  ends (per_milestone: the milestone head's checks), after revert (wait again on the new head).
  A split of a batch red in CI asks `CANDIDATES` (begin, take_back): jobs/composition.py gives
  it to jobs/features/bisect.
- Text: the plan's CI line, the card's CI state per milestone and per batch, the `ci_failed`
  report and the change note's section "The repository's CI" (parts.py installs them).

Modules:
- rules.py: which checks a commit needs, the verdict, whether a repository has CI (pure).
- notes.py: what people see of CI: plan, card, the `ci_failed` report, the note (pure).
- record.py: CI's part of the record, its former fields and its accessors (pure).
- parts.py: the part, the gate row and the note and card sections, as `PARTS` (pure).
- wait.py: starting a wait, the hooks and what the verdict does (keep waiting, go on, open
  `ci_failed`); withdraw.py: a red per_batch commit (or one skipped at `ci_failed`) taken back
  off the branch; rerun.py: `retry` at `ci_failed`.
- wiring.py: `FEATURE` (the features' tuple's entry) and `CANDIDATES`.
- port.py: CI's port (`jobs.ports.CiForge`), the only part of the forge this feature reaches.
"""
