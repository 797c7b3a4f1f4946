"""The use cases local and server mode share (jobs/engine/usecases.py): one decision, two
wirings. Each refusal is asserted in both modes: the local session and the server's handler."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.commands import Command, spec_for
from jobs.adapters.store import FileStore
from jobs.adapters.workspace import Repository
from jobs.engine import usecases
from jobs.kernel import outbox
from jobs.kernel.gates import RefusedError, Verb
from jobs.kernel.job import Job
from jobs.kernel.model import Gate, JobStatus
from jobs.kernel.record_parts import Awaited, RecordPart
from jobs.local import LocalSession
from tests.jobs.kernel.test_gates import gated_job
from tests.kit.records import T0, make_job
from tests.kit.repos import make_repo


class RecordingWiring:
    """A Wiring that records what the use case asked of the mode."""

    def __init__(self) -> None:
        self.effects: list[str] = []

    def save(self, job: Job) -> None:
        self.effects.append(f"save:{job.status}")

    def go_on(self, job: Job) -> None:
        self.effects.append(f"go_on:{job.status}")

    def revert(self, job: Job, batch: int) -> None:
        self.effects.append(f"revert:{batch}")


def test_steer_applies_the_verb_then_saves_then_carries_on() -> None:
    wiring, job = RecordingWiring(), gated_job(Gate.PLAN)
    assert "approved" in usecases.steer(wiring, job, Verb.APPROVE)
    assert wiring.effects == ["save:running", "go_on:running"]


def test_a_verb_the_gate_does_not_take_changes_nothing() -> None:
    wiring, job = RecordingWiring(), gated_job(Gate.PLAN)
    with pytest.raises(RefusedError, match="does not apply"):
        usecases.steer(wiring, job, Verb.RETRY)
    assert wiring.effects == [] and job.gate is not None


def test_instruct_keeps_the_stripped_text_and_counts_the_standing_instructions() -> None:
    wiring, job = RecordingWiring(), gated_job(Gate.PLAN)
    assert usecases.instruct(wiring, job, "  keep the names ") == "instruction recorded (1 standing)"
    assert job.instructions == ["keep the names"] and wiring.effects == ["save:awaiting_human"]
    with pytest.raises(RefusedError, match="needs the instruction text"):
        usecases.instruct(wiring, job, "   ")
    for placeholder in ("TEXT", "<text>"):  # a printed `instruct … TEXT` pasted unedited
        with pytest.raises(RefusedError, match="not its placeholder"):
            usecases.instruct(wiring, job, placeholder)
    assert job.instructions == ["keep the names"]


@pytest.mark.parametrize("status", [JobStatus.COMPLETED, JobStatus.CANCELLED, JobStatus.FAILED])
def test_instruct_on_a_finished_job_is_refused_with_the_reason(status: JobStatus) -> None:
    wiring, job = RecordingWiring(), make_job(status=status)
    with pytest.raises(RefusedError, match=f"the job is already {status}") as caught:
        usecases.instruct(wiring, job, "too late")
    assert caught.value.hint == usecases.INSTRUCT_HINT
    assert job.instructions == [] and wiring.effects == []


def finished_job_on_disk(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path / "repo", {"README.md": "hello\n"})
    FileStore(Repository(repo).state_dir).save(make_job(status=JobStatus.COMPLETED))
    return repo


def test_both_modes_refuse_instruct_on_a_finished_job_the_same_way(tmp_path: Path) -> None:
    # Local mode: the CLI's session, on the record in the checkout.
    repo = finished_job_on_disk(tmp_path)
    local = LocalSession(repo, 7, sink=lambda _kind, _text: None)
    with pytest.raises(RefusedError) as in_local:
        local.instruct("too late")
    assert local.load().instructions == []
    # Server mode: the worker's handler for `/stepwise instruct`.
    spec = spec_for("instruct")
    assert spec is not None
    wiring, job = RecordingWiring(), make_job(status=JobStatus.COMPLETED)
    with pytest.raises(RefusedError) as on_server:
        spec.handle(wiring, job, Command(verb="instruct", argument="too late", line=1,
                                         raw="/stepwise instruct too late"))  # type: ignore[arg-type]
    assert wiring.effects == [] and job.instructions == []
    assert in_local.value.message == on_server.value.message == "the job is already completed"


# -- status ---------------------------------------------------------------------------------------
RESUME = "stepwise run --repo . --issue issue.md --number 7"


@pytest.mark.parametrize("status", [JobStatus.QUEUED, JobStatus.PLANNING, JobStatus.RUNNING])
def test_status_of_a_working_job_exits_0_in_both_modes(status: JobStatus) -> None:
    for resume in (RESUME, None):
        report = usecases.status(make_job(status=status), resume_command=resume)
        assert report == usecases.StatusReport(usecases.Progress.WORKING, 0, f"job is {status}")


def test_status_of_an_interrupted_job_differs_only_in_who_resumes_it() -> None:
    job = make_job(status=JobStatus.INTERRUPTED)
    local = usecases.status(job, resume_command=RESUME)
    assert (local.progress, local.exit_code) == (usecases.Progress.INTERRUPTED, 4)
    assert "the process that ran it is gone" in local.message and f"`{RESUME}`" in local.message
    server = usecases.status(job)
    assert (server.progress, server.exit_code) == (usecases.Progress.INTERRUPTED, 0)
    assert "resumes by itself" in server.message


def test_status_at_a_gate_whose_comment_is_not_on_github_says_it_waits_to_be_published() -> None:
    job = gated_job(Gate.PLAN)
    shown = usecases.status(job)
    assert (shown.progress, shown.exit_code) == (usecases.Progress.AT_GATE, 3)
    assert job.gate is not None
    outbox.owe(job, outbox.gate_key(job.gate.id), "gate", now=T0)
    owed = usecases.status(job)
    assert (owed.progress, owed.exit_code) == (usecases.Progress.UNPUBLISHED, 3)
    assert "waiting to be published" in owed.message and shown.message in owed.message


class Outside(RecordPart):
    """A feature's part that holds the job waiting outside (as CI's does), for the test."""

    sha: str = ""

    def awaited(self) -> Awaited | None:
        return Awaited(self.sha, T0, "waiting for CI: 1 of 3 checks done") if self.sha else None


def test_status_of_a_job_waiting_outside_and_of_ended_jobs() -> None:
    job = make_job(status=JobStatus.RUNNING)
    job.parts["outside"] = Outside(sha="c" * 40)
    assert usecases.status(job) == usecases.StatusReport(
        usecases.Progress.WAITING_OUTSIDE, 0, "waiting for CI: 1 of 3 checks done")
    assert not job.is_active and job.waiting_outside
    codes = {status: usecases.status(make_job(status=status)).exit_code
             for status in (JobStatus.COMPLETED, JobStatus.FAILED, JobStatus.CANCELLED,
                            JobStatus.CANCEL_REQUESTED)}
    assert codes == {JobStatus.COMPLETED: 0, JobStatus.FAILED: 1, JobStatus.CANCELLED: 5,
                     JobStatus.CANCEL_REQUESTED: 5}


def test_local_status_records_a_dead_process_as_interrupted(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"README.md": "hello\n"})
    FileStore(Repository(repo).state_dir).save(make_job(status=JobStatus.RUNNING))
    _card, outcome = LocalSession(repo, 7, sink=lambda _kind, _text: None).status()
    assert (outcome.status, outcome.exit_code) == (JobStatus.INTERRUPTED, 4)
    assert "Resume it with" in outcome.message
