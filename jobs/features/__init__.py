"""Features: one folder each, holding a capability's pure rules (its config block, its record
part, its gate rows), its hooks at the loop's named points, its note and card sections and its
port. The engine never imports a feature; jobs/composition.py lists them, one line each, in the
order their hooks run, and every composition root installs them explicitly. A feature's
`wiring.py` gives its `Feature` with an `active` guard, so a job that does not use it runs none
of its hooks.

- ci/: CI as a verifier: wait for the repository's required checks, the `ci_failed` gate.
- base_moves/: the moved base merged into the job branch, conflicts replayed, the `conflict` gate.
- bisect/: split a multi-file batch that failed validation, and `batch_size: auto`.
- environments/: what the config's `setup` builds, cached by key.
- llm/: the llm recipe's ties to the loop: the endpoint check, the edit hooks, the `budget`
  gate, drafted specs, the model usage in the note.
- campaigns/: one spec across many repositories.
- evidence/: what a batch's tests ran of its changed lines (`uncovered_change`), whether it made
  the tests check less (`tests_weakened`), its edit shapes (`gates.auto_approve_known_shapes`)
  and the plan's forecast; the change note's `## Evidence`.
- check_runs/: Stepwise's own check runs, on the server only (`SERVER_FEATURES`).

Contract: features are independent of each other (an import contract); what two features share
goes through the composition (e.g. bisect asks CI for candidates through a protocol it declares).
"""
