"""What to do next, decided from the record and its inputs (pure): `plan.py` (the scope and its
<<<<<<< HEAD
batches), `guard.py` (the unidiff policy: what a batch's diff may do) with `guard_diff.py`
(reading the staged diff), `reconcile.py` (what the branch's commits mean: adopt batch K at sha
S, a revert of batch K, our note, someone else's commit, a rewrite), `resume.py` (an ended job
carried on), `verdicts.py` (the final review's verdict, whether a revert may happen and what
it did), `network_failure.py` (a failed command's network cause: a refused host, a name that
does not resolve, an untrusted certificate, with the fix) and `ci.py` (what the forge observes
of a commit's checks, and the shape of CI's verdict that jobs/features/ci computes), and
`blame.py` (whose a failed validation is: the edit's, a flaky test's, pre-existing or the
environment's, from the re-runs of its failing tests).
=======
batches), `guard.py` (the unidiff policy: what a batch's diff may do) with `guard_diff.py` (reading
the staged diff) and `new_names.py` (the new file names no repository may get),
`reconcile.py` (what the branch's commits mean: adopt batch K at sha S, a revert of batch K,
our note, someone else's commit, a rewrite), `resume.py` (an ended job carried on),
`edit_shapes.py` (each hunk normalised and grouped by shape, outliers first, summable across
batches and repositories), `verdicts.py` (the final review's verdict, whether a revert may happen
and what it did), `network_failure.py` (a failed command's network cause: a refused host, a name
that does not resolve, an untrusted certificate, with the fix) and `ci.py` (what the forge observes
of a commit's checks, and the shape of CI's verdict that jobs/features/ci computes).
>>>>>>> main

Contract: values in, values out; the engine applies a decision to the record and does the I/O.
"""
