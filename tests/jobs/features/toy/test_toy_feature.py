"""The safe point's hook list (jobs/engine/engine.py `SAFE_POINT`, then `Services.safe_point`):
a feature given to the wiring in one line runs at every safe point of a running job, after the
engine's own hooks, and can hold the job with an outcome of its own; the job then goes on."""

from __future__ import annotations

from pathlib import Path

from jobs.domain.model import BatchStatus, JobStatus
from jobs.engine.engine import SAFE_POINT
from tests.jobs.features.toy import HELD, Toy
from tests.kit.local_e2e import build_sample, issue, load_job, session


def test_a_toy_feature_runs_at_every_safe_point_and_can_hold_the_job(tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo")
    toy = Toy(hold=True)
    local = session(repo)
    local.services.safe_point = (toy.at_safe_point,)  # the one line a feature adds
    held = local.run(issue(), yes=True)
    assert (held.status, held.exit_code, held.message) == (JobStatus.RUNNING, 0, HELD)
    assert toy.seen == [0]  # the first safe point, before any batch
    toy.hold = False
    again = session(repo)
    again.services.safe_point = (toy.at_safe_point,)
    done = again.run(issue(), yes=True)
    job = load_job(repo)
    assert done.status is JobStatus.COMPLETED and job.status is JobStatus.COMPLETED
    batches = sum(batch.status is BatchStatus.COMPLETED for batch in job.batches)
    after = toy.seen[1:]  # before each batch, each milestone's end and the end, in order
    assert after == sorted(after) and set(after) == set(range(batches + 1)), after


def test_the_engine_s_own_hooks_come_first_in_a_fixed_order() -> None:
    names = [hook.__name__ for hook in SAFE_POINT]
    assert names == ["_cancel", "_ci_verdict", "sync", "update_from_base"]
