"""Evidence that a batch is right, not just green (DESIGN.md "Evidence"; issue 39): what each
batch's validation shows beyond its exit codes, in the gate, the card, the check runs, the task
center and the change note's `## Evidence` section.

- The test-integrity guard (integrity*.py): the tests collected and passed before and after each
  batch (the runner's report: integrity_argv.py asks for it, integrity_reports.py reads it) and
  the test files and test configuration the batch changed (integrity_python.py, integrity_js.py,
  integrity_config.py), compared by integrity.py (its data: integrity_shapes.py). A batch that
  makes the tests check less stops at the gate `tests_weakened` (exit 4; `approve` commits it,
  named in the note with who accepted it; `retry`, `skip`, `cancel`); with recipe llm the
  finding goes back to the model once first. Record part `tests_integrity` (integrity_parts.py);
  hooks `measure` and `before_commit` (integrity_hooks.py); its `Feature` is
  integrity_wiring.py.
"""
