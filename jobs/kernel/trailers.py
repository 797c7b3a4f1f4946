"""The trailers that tie a commit to its job, spelled here only (tests/jobs/kernel/
test_trailers.py refuses a `Stepwise-` literal anywhere else in jobs/ and bot/).

Every commit Stepwise makes ends with them: the job, and what the commit is (a batch with its
milestone and spec, the change note, a revert, a merge of the moved base, a split's survivors,
a candidate pushed for CI). Reading the branch back (jobs/decisions/reconcile.py, recovery,
rebuilt records) relies on these names; they never change.
"""

from __future__ import annotations

JOB = "Stepwise-Job"
BATCH = "Stepwise-Batch"
MILESTONE = "Stepwise-Milestone"
SPEC = "Stepwise-Spec"  # the first 16 characters of the spec's digest
NOTE = "Stepwise-Note"
REVERT = "Stepwise-Revert"
BASE_MERGE = "Stepwise-Base-Merge"
SPLIT = "Stepwise-Split"  # the files a split set aside
CANDIDATE = "Stepwise-Candidate"  # a split's candidate pushed for CI, withdrawn after


def trailer_lines(*pairs: tuple[str, object]) -> str:
    """`Name: value` lines, one per pair, each ending in a newline."""
    return "".join(f"{name}: {value}\n" for name, value in pairs)
