"""Stepwise's own check runs, published through the forge: `Stepwise / batch K` on each batch
commit (its validation evidence, with annotations from the failed attempts before it) and
`Stepwise` on the branch head (in progress, `action_required` at a gate naming the command,
then success, cancelled or failure). The drafts are pure (jobs/notes/check_runs.py); the
forge finds a run again by its external id, so publishing twice never makes a second run.
"""

from __future__ import annotations

import hashlib
from contextlib import suppress

from jobs.adapters.sandbox_view import REPO_MOUNT
from jobs.basics.voice import LOCAL, Voice
from jobs.engine.context import CancelSignal, JobContext
from jobs.features.check_runs.port import check_runs_of
from jobs.kernel.feature_parts import (
    LineMark,
    batch_marks,
    check_batch_lines,
    check_job_lines,
    job_marks,
)
from jobs.kernel.gates import gate_choices
from jobs.kernel.job import Batch, Job
from jobs.kernel.model import JobStatus
from jobs.kernel.records import CommandEvidence
from jobs.notes.annotations import Annotation, annotations_from_output
from jobs.notes.check_runs import JobCheckState, batch_check, job_check
from jobs.notes.progress import gate_prompt
from jobs.ports import ConflictError


def failed_command(commands: list[CommandEvidence]) -> CommandEvidence | None:
    return next((c for c in reversed(commands) if c.exit_code != 0 or c.timed_out), None)


def publish_batch_check(engine: JobContext, batch: Batch) -> None:
    """The check run on batch K's commit: what validated it, and what failed before."""
    job = engine.job
    attempt = batch.last_attempt
    if batch.commit is None or attempt is None:
        return
    # Only earlier failures are annotated: the commit's files (a whole `ls-tree`) are listed
    # only when there is one.
    failures = any(failed_command(p.commands) for p in batch.attempts[:-1])
    tracked = set(engine.services.repository.tracked_files(batch.commit)) if failures else set()
    earlier: list[CommandEvidence] = []
    annotations: list[Annotation] = []
    for previous in batch.attempts[:-1]:
        failed = failed_command(previous.commands)
        if failed is None:
            continue
        earlier.append(failed)
        found = annotations_from_output(failed.output_tail, is_repo_file=tracked.__contains__,
                                        roots=(str(REPO_MOUNT), str(engine.worktree.path)),
                                        title=f"attempt {previous.number}: {failed.display}")
        annotations += [Annotation(a.path, a.line, a.message, "warning", a.title) for a in found]
    annotations += [_annotation(mark) for mark in batch_marks(job, batch)]
    check_runs_of(engine).publish_check_run(job, batch_check(
        job_id=job.id, number=batch.number, total=len(job.batches),
        files=batch.changed_files or batch.files, head_sha=batch.commit,
        commands=attempt.commands, earlier_failures=earlier, annotations=annotations,
        evidence=check_batch_lines(job, batch)))


def _annotation(mark: LineMark) -> Annotation:
    return Annotation(mark.path, mark.line, mark.message, mark.level, mark.title)


def job_check_state(job: Job, voice: Voice = LOCAL) -> tuple[JobCheckState, str, str]:
    """The state, headline and command of the `Stepwise` check run for the job as it is: at a
    gate, the recommended command in `voice`, a tab, and what it does (`/stepwise approve` at
    `ci_failed` accepts the red CI)."""
    if job.status is JobStatus.COMPLETED:
        return JobCheckState.DONE, f"Stepwise #{job.number} completed: {job.title}", ""
    if job.status is JobStatus.CANCELLED:
        return JobCheckState.CANCELLED, f"Stepwise #{job.number} was cancelled", ""
    if job.status is JobStatus.FAILED:
        reason = job.error.message if job.error else "the job failed"
        return JobCheckState.FAILED, f"Stepwise #{job.number} failed: {reason}", ""
    if job.status is JobStatus.AWAITING_HUMAN and job.gate is not None:
        choices = gate_choices(job, job.gate)
        return (JobCheckState.AT_GATE, f"Waiting at gate `{job.gate.kind}`: {job.gate.reason}",
                f"{voice.typed(choices.usage)}\t{choices.meaning}")
    awaited = job.awaited()
    if awaited is not None:
        return JobCheckState.WORKING, awaited.says, ""
    return JobCheckState.WORKING, f"Stepwise #{job.number} is working ({job.status})", ""


def publish_job_check(engine: JobContext) -> None:
    """The `Stepwise` check run on the branch head, sent when what it says changed."""
    job = engine.job
    if job.status in (JobStatus.QUEUED, JobStatus.PLANNING) or not job.approved_digest:
        return  # nothing is pushed before the plan is approved
    state, headline, command = job_check_state(job, engine.services.voice)
    evidence = check_job_lines(job)  # the features' (evidence: changed lines run by the tests)
    said = f"{job.head_sha}|{state}|{headline}|{command}"
    if evidence:  # a digest: the record keeps what was said small
        said += "|" + hashlib.sha256("\n".join(evidence).encode()).hexdigest()[:16]
    if job.job_check_said == said:
        return
    command, _, meaning = command.partition("\t")
    # At a gate the run's text is the whole gate report (cut to GitHub's 65,535 bytes), which a
    # comment too long for GitHub points to.
    report = gate_prompt(job, voice=engine.services.voice) if state is JobCheckState.AT_GATE else ""
    check_runs_of(engine).publish_check_run(job, job_check(
        job_id=job.id, head_sha=job.head_sha, state=state, headline=headline,
        command=command, meaning=meaning, card=report, evidence=evidence,
        annotations=[_annotation(mark) for mark in job_marks(job)]))
    job.job_check_said = said
    # Remembered, so the next step does not send it again; if the record changed meanwhile
    # (a command), the next step sends it again.
    with suppress(ConflictError, CancelSignal):
        engine.save(touched=())
