"""A milestone whose batch made the tests check less never passes its gate on its own
(`gates.auto_approve_known_shapes`), even when someone accepted the weakening at the batch's
`tests_weakened` gate: the test-integrity facet holds it, naming why."""

from __future__ import annotations

from jobs.features.evidence.integrity_parts import put_batch_tests
from jobs.features.evidence.record import BatchTests
from jobs.features.evidence.shapes_hooks import holds_of
from jobs.kernel.model import BatchStatus
from tests.kit.records import make_batch, make_job


def test_a_weakening_accepted_at_its_gate_still_holds_the_milestone() -> None:
    weakened, honest = make_batch(1, status=BatchStatus.COMPLETED), \
        make_batch(2, status=BatchStatus.COMPLETED)
    put_batch_tests(weakened, BatchTests(before="3 collected, 3 passed",
                                         after="2 collected, 2 passed",
                                         findings=["`test_total` removed"],
                                         accepted_by="@maria", accepted=["`test_total` removed"]))
    put_batch_tests(honest, BatchTests(before="3 collected, 3 passed",
                                       after="3 collected, 3 passed"))
    job = make_job(batches=[weakened, honest])
    held = holds_of(job, 1)
    assert "batch 1: it made the tests check less" in held
    assert not any(line.startswith("batch 2: it made the tests") for line in held)
