"""The loop's table (jobs/engine/engine.py): every status has a handler, and the statuses that
wait or have ended stop the loop with their outcome and do nothing else."""

from __future__ import annotations

from pathlib import Path

import pytest

from jobs.adapters.sandbox import make_sandbox
from jobs.adapters.store import FileStore
from jobs.adapters.workspace import Repository
from jobs.engine.context import Services
from jobs.engine.engine import STEPS, Engine
from jobs.kernel.model import Gate, JobStatus
from tests.jobs.kernel.test_gates import gated_job
from tests.kit.features import WITHOUT_BISECT
from tests.kit.forge import InMemoryForge
from tests.kit.records import make_job
from tests.kit.repos import make_repo


def services(tmp_path: Path) -> tuple[Services, InMemoryForge]:
    repository = Repository(make_repo(tmp_path / "repo", {"a.py": "x = 1\n"}))
    forge = InMemoryForge()
    return Services(repository=repository, store=FileStore(repository.state_dir),
                    sandbox=make_sandbox(require_isolation=False), forge=forge,
                    features=WITHOUT_BISECT), forge


def test_every_job_status_has_a_step_handler() -> None:
    assert set(STEPS) == set(JobStatus)


@pytest.mark.parametrize(("status", "code"), [(JobStatus.COMPLETED, 0), (JobStatus.FAILED, 1),
                                              (JobStatus.CANCELLED, 5)])
def test_an_ended_job_returns_its_outcome_and_touches_nothing(tmp_path: Path, status: JobStatus,
                                                              code: int) -> None:
    svc, forge = services(tmp_path)
    job = svc.store.save(make_job(status=status))
    outcome = Engine(svc, job).run()
    assert (outcome.status, outcome.exit_code) == (status, code)
    assert forge.effects == [] and svc.store.reload(job).version == job.version  # type: ignore[union-attr]


def test_a_waiting_job_returns_the_gate_exit_code_and_yes_does_not_pass_a_failure_gate(
        tmp_path: Path) -> None:
    svc, forge = services(tmp_path)
    job = svc.store.save(gated_job(Gate.FAILURE))
    outcome = Engine(svc, job, auto_approve=True).run()
    assert outcome.status is JobStatus.AWAITING_HUMAN and outcome.exit_code == job.gate.exit_code  # type: ignore[union-attr]
    assert forge.effects == [] and job.gate is not None
