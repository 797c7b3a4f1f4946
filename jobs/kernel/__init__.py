"""The job and its rules (pure): `model.py` (the two state machines: the job's and the batch's
statuses, their transition tables and the one `transition()`; and the gate table `GATES`: when each
gate opens, the verbs it takes, its prompt's choices, its exit code), `job.py` (the job, its
batches, its open gate; `Job.parts` and `Batch.parts` keep each feature's own part),
`record_parts.py` (those parts: the `RecordPart` model a feature registers, read back typed),
`records.py` (evidence, attempts, model calls, events), `record_upgrades.py` (records of earlier
versions read), `gates.py` (opening gates, applying the verbs, what a gate prompt recommends),
`gate_passes.py` (what passing each gate does: one row per gate kind, one sub-row per typed cause
of `failure`), `feature_parts.py` (what a feature adds here: its part of the record, its gate
rows, its causes of `failure`, its commits, its note and card sections, installed by the
composition roots), `outbox.py` (what is owed to GitHub until it confirms it), `plan_history.py`
(each plan's batches, kept across re-plans), `human_commits.py` (an accepted commit by a
person), `git_versions.py` (which version tools a package uses, their variables) and
`trailers.py` (the trailers that tie a commit to its job, spelled there only).

Contract: a new gate is one row (a feature's, a `GateRow`); passing a gate is a table lookup,
one meaning per gate kind and cause. A feature's data is its `RecordPart`, never a field here.
No I/O: the engine saves and publishes.
"""
