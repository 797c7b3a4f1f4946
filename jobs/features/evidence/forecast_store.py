"""The forecast facet's hooks and what it keeps per repository: what each finished job measured
(`<state dir>/evidence/measured.json`, the last 50 jobs) is read when a job is planned, the
forecast the plan states is fixed once the plan is approved, and the job's own figures are added
when it ends."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from pydantic import ValidationError

from jobs.engine.context import JobContext
from jobs.features.evidence.forecast import (
    History,
    Measured,
    actual,
    forecast,
)
from jobs.features.evidence.record import JobEvidence, job_evidence
from jobs.inputs.recipes import rules_for
from jobs.kernel.model import JobStatus

KEPT = 50
MAX_BYTES = 1024 * 1024


def history_path(engine: JobContext) -> Path:
    return engine.services.repository.state_dir / "evidence" / "measured.json"


def read_history(path: Path) -> list[Measured]:
    """The jobs measured so far; a missing, oversized or unreadable file is an empty history."""
    try:
        if path.stat().st_size > MAX_BYTES:
            return []
        return History.model_validate_json(path.read_bytes()).jobs
    except (OSError, ValidationError, ValueError):
        return []


def planned(engine: JobContext) -> None:
    """Keep what earlier jobs on the repository measured, and the scope's size, for the plan."""
    job = engine.job
    size = 0
    if rules_for(job.spec.recipe).uses_model:
        texts = engine.services.repository.read_texts(job.head_sha, job.scope_files[:2000])
        size = sum(len(text.encode()) for text in texts.values() if text)
    part = job.part(JobEvidence)
    part.history = History(jobs=read_history(history_path(engine)), scope_bytes=size)
    part.forecast = None


def fix_forecast(engine: JobContext) -> None:
    """At the first safe point after approval: the forecast is the one the plan stated."""
    job = engine.job
    if job.approved_digest and job_evidence(job).forecast is None:
        stated = forecast(job, job_evidence(job).history or History())
        if stated is not None:
            job.part(JobEvidence).forecast = stated


def at_end(engine: JobContext) -> None:
    """A completed job's figures join the repository's history (written atomically)."""
    job = engine.job
    done = actual(job)
    if job.status is not JobStatus.COMPLETED or done is None or not job.batches:
        return
    ran = [b for b in job.batches if b.attempts]
    runs_per_batch = done.runs / max(1, len(ran))
    validation = [c.duration_s for b in ran for a in b.attempts for c in a.commands
                  if list(c.argv) in [list(v) for v in job.config.validate_argvs()]]
    run_s = sum(validation) / max(1, done.runs)
    edit_s = max(0.0, done.wall_s - sum(validation)) / max(1, len(ran))
    entry = Measured(job=f"issue-{job.number}", batches=len(ran), runs_per_batch=runs_per_batch,
                     run_s=round(run_s, 3), edit_s_per_batch=round(edit_s, 3),
                     tokens_per_batch=round(done.tokens / max(1, len(ran)), 1),
                     recipe=str(job.spec.recipe))
    path = history_path(engine)
    earlier = [m for m in read_history(path) if m.job != entry.job][-(KEPT - 1):]
    jobs = [*earlier, entry]
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(f".{os.getpid()}.tmp")
    temporary.write_text(History(jobs=jobs).model_dump_json())
    os.replace(temporary, path)
    with contextlib.suppress(OSError):
        temporary.unlink()


def safe_point(engine: JobContext) -> bool | None:
    fix_forecast(engine)
    return None

