"""Resuming an ended job as a pure change of the record: a failed or cancelled job carries on
(running when its plan was approved, planning again with the current config when not), keeps
every completed batch, resets the stopped batch's failure count, adopts a changed spec as an
edit would; a completed job or one that has not ended is refused with nothing changed."""

from __future__ import annotations

import pytest

from jobs.basics.errors import BadInputError, ErrorInfo, RetryClass
from jobs.decisions.resume import resume_job
from jobs.inputs.config import load_config
from jobs.kernel.gates import RefusedError
from jobs.kernel.job import Job
from jobs.kernel.model import BatchStatus, Gate, JobStatus
from tests.kit.records import SPEC_BLOCK, T0, make_batch, make_job

BODY = f"Body\n\n```stepwise\n{SPEC_BLOCK}```\n"


def ended(status: JobStatus, *, approved: bool = True) -> Job:
    job = make_job(status=status, batches=[
        make_batch(1, status=BatchStatus.COMPLETED, commit="c" * 40),
        make_batch(2, status=BatchStatus.FAILED, consecutive_failures=2),
        make_batch(3)])
    job.approved_digest = job.spec_digest if approved else None
    if status is JobStatus.FAILED:
        job.error = ErrorInfo(code="push_refused", retry_class=RetryClass.DO_NOT_RETRY,
                              message="the push was refused", hint="check the branch rules")
    job.server.cancelled_by = "@maria closed the issue" if status is JobStatus.CANCELLED else ""
    return job


@pytest.mark.parametrize("status", [JobStatus.FAILED, JobStatus.CANCELLED])
def test_an_approved_job_runs_on_keeping_its_batches(status: JobStatus) -> None:
    job = ended(status)
    message = resume_job(job, now=T0, title=job.title, body=BODY)
    assert job.status is JobStatus.RUNNING and job.gate is None and job.error is None
    assert job.server.cancelled_by == ""
    assert job.batch(1).status is BatchStatus.COMPLETED and job.batch(1).commit == "c" * 40
    assert job.batch(2).consecutive_failures == 0
    assert f"({status} before)" in message and "its completed batch is kept" in message


def test_an_unapproved_job_plans_again_with_the_current_config() -> None:
    job = ended(JobStatus.FAILED, approved=False)
    job.baseline_ok = False
    config = load_config("batch_size: 9\n")
    resume_job(job, now=T0, config=config)
    assert job.status is JobStatus.PLANNING and job.config == config
    assert job.baseline_ok is None


def test_a_changed_spec_opens_spec_changed() -> None:
    job = ended(JobStatus.CANCELLED)
    resume_job(job, now=T0, title=job.title, body=BODY.replace("src/**/*.py", "lib/**/*.py"))
    assert job.status is JobStatus.AWAITING_HUMAN and job.gate is not None
    assert job.gate.kind is Gate.SPEC_CHANGED and job.pending_issue is not None


@pytest.mark.parametrize(("status", "said"), [
    (JobStatus.COMPLETED, "completed: there is nothing to resume"),
    (JobStatus.RUNNING, "not ended"),
    (JobStatus.AWAITING_HUMAN, "not ended"),
])
def test_refused_with_nothing_changed(status: JobStatus, said: str) -> None:
    job = ended(JobStatus.CANCELLED)
    job.status = status
    before = job.model_dump()
    with pytest.raises(RefusedError, match=said):
        resume_job(job, now=T0, title=job.title, body=BODY)
    assert job.model_dump() == before


def test_a_broken_spec_refuses_before_anything_changes() -> None:
    job = ended(JobStatus.CANCELLED)
    before = job.model_dump()
    with pytest.raises(BadInputError, match="stepwise"):  # the issue holds no spec block
        resume_job(job, now=T0, title=job.title, body="no spec here")
    assert job.model_dump() == before
