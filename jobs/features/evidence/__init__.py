"""Evidence that a batch is right, not just green (DESIGN.md, "Evidence"): what the tests ran of
the batch's changed lines, whether the batch made the tests check less, the kinds of edit it made
(edit shapes) and, before approval, a forecast of what the job will cost.

Contract:
- Config: the `evidence:` block (`coverage: auto | off`, `min_changed_coverage`) and the
  `gates:` block (`auto_approve_known_shapes`) of `.github/stepwise.yml`. Their models stay in
  jobs/inputs/evidence_config.py because `RepoConfig` types them.
- Record: the feature's part of each batch, `Batch.parts["evidence"]`, one key per facet
  (`coverage`, `shapes`, ...), and of the job, `Job.parts["evidence"]` (the forecast, the shapes
  approved at gates); record.py types them (`BatchEvidence`, `JobEvidence`: a field per facet).
- Gates: `uncovered_change` (coverage.py's facet, exit code 4): the tests ran fewer of the
  batch's changed lines than `evidence.min_changed_coverage`; `approve` commits it, `retry`,
  `skip`, `cancel`. Each facet brings its own rows.
- Hooks (wiring.py): around the validation that accepts a batch (a facet's probe: coverage runs
  there), just before the batch is committed (a facet's verdict may stop it at its gate), once
  the plan is made (the edit shapes of a dry run, the forecast's history) and before a milestone
  ends (a milestone of known shapes passes on its own).
- Text: one vocabulary everywhere: the batch's evidence lines are the same in the gate, the PR
  card, the `Stepwise` check runs (uncovered lines as annotations) and the change note's
  `## Evidence` section (parts.py installs them).

How a facet plugs in (one line each, no edit of the shared files):
- its pure texts: a `FacetTexts` (texts.py) added to `FACETS` in facets.py: the batch's lines,
  the card's words, the milestone's, the plan's and the job's lines, its annotations, its gates;
- its hooks: a `FacetHooks` (hooks.py) added to `HOOKS` in wiring.py: a probe around the
  validation, a verdict before the commit;
- its record: a field of `BatchEvidence` or `JobEvidence` (record.py), typed by its model.

Modules:
- record.py: the feature's part of the record, read and written per facet (pure).
- failures.py: the facet of failed validations examined: flaky, pre-existing, a changed
  environment or the edit's (pure; the engine decides it: jobs/decisions/blame.py).
- texts.py: `FacetTexts` and the shared words (pure); facets.py: the facets' texts, in order.
- parts.py: the gate rows, the note section and the card, gate and check-run lines (pure).
- hooks.py: `FacetHooks` and how the facets' hooks are run as the feature's.
- wiring.py: `FEATURE` (the features' tuple's entry).
- changed_lines.py: the lines a batch added, per file, from its diff (pure).
- Changed-line coverage: coverage_record.py (its record), coverage_texts.py (its words and the
  `uncovered_change` gate, pure), coverage_probe.py (the probe around the validation: which
  commands, PYTHONPATH's `sitecustomize`, `NODE_V8_COVERAGE`, the repository's own coverage
  kept), coverage_starter.py (the `sitecustomize` copied into the sandbox), line_probe.py (copied
  beside it: before Python 3.12, the batch's files compiled with a record per statement),
  coverage_read.py
  (the probes' reports read within caps and mapped onto the changed lines), coverage_gate.py
  (the verdict before the commit), coverage_subsets.py (a split batch's subsets' records, the
  landing one's made the batch's).
- Edit shapes (the grouping itself is jobs/decisions/edit_shapes.py, which campaigns sum too):
  shapes_texts.py (the batches', milestones' and the plan's shapes, what was approved, why a
  milestone needs a person, pure), shapes_hooks.py (shapes recorded before each commit, the
  plan's dry run, a milestone of known shapes passing its gate on its own).
- Forecast: forecast.py (the forecast and the actual figures, pure), forecast_texts.py (the plan's
  and the note's lines, pure), forecast_store.py (what earlier jobs measured, kept per
  repository; the forecast fixed at approval).
- The `tests` facet, the test-integrity guard: integrity.py compares what the tests check before
  and after a batch (its data: integrity_shapes.py), reading Python test files through `ast`
  (integrity_python.py), JavaScript/TypeScript ones by pattern (integrity_js.py), configuration
  that selects tests (integrity_config.py) and the runners' reports (integrity_reports.py; asked
  for by integrity_argv.py); integrity_parts.py holds its record, the `tests_weakened` gate and
  its words (all pure); integrity_hooks.py its probe and verdict.
"""
