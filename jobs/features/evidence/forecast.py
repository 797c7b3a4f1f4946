"""The forecast a plan states before approval, and the actual figures the change note sets
against it (pure): validation runs (one a batch, and the budget of retries and splits), wall
time, and for recipe `llm` model tokens; from the baseline run and what earlier jobs on the
repository measured (`Measured`, kept by forecast_store.py)."""

from __future__ import annotations

import math
from statistics import median

from pydantic import BaseModel

from jobs.inputs.recipes import rules_for
from jobs.kernel.feature_parts import (
    MODEL_TOKENS_IN,
    MODEL_TOKENS_OUT,
    SPLIT_VALIDATIONS,
    batch_figures,
    figures,
)
from jobs.kernel.job import Job

FACET = "forecast"  # the facet's name (its record: `JobEvidence.forecast`)
TOKENS_PER_BYTE = 0.25  # a file's bytes as tokens, read once and written once, when unmeasured
LLM_ROUNDS = 3  # the prompt, the file read and the edit written: an unmeasured batch's rounds


class Measured(BaseModel):
    """One finished job on the repository: per batch, its runs, seconds and tokens."""

    job: str
    batches: int
    runs_per_batch: float
    run_s: float  # seconds of one validation run
    edit_s_per_batch: float = 0.0
    tokens_per_batch: float = 0.0
    recipe: str = ""


class History(BaseModel):
    jobs: list[Measured] = []
    scope_bytes: int = 0  # the size of the files in scope (an llm job's unmeasured tokens)


class Forecast(BaseModel):
    runs: int  # validation runs expected
    runs_budget: int  # at most, with every retry and split the config allows
    wall_s: float
    run_s: float
    tokens: int = 0
    basis: str  # what it comes from


class Actual(BaseModel):
    runs: int
    wall_s: float
    tokens: int


def split_budget(files: int) -> int:
    """Validations a bisection of a failing batch of `files` files may take (jobs/features/
    bisect halves it until the culprits are found): two halves a level."""
    return 2 * math.ceil(math.log2(files)) if files > 1 else 0


def baseline_run_s(job: Job) -> float:
    return sum(c.duration_s for c in job.baseline)


def forecast(job: Job, history: History) -> Forecast | None:
    """What the job is expected to cost, from the baseline and the earlier jobs' measurements."""
    todo = [b for b in job.batches if b.commit is None]
    if not todo:
        return None
    earlier = history.jobs[-10:]
    run_s = baseline_run_s(job) or (median(m.run_s for m in earlier) if earlier else 0.0)
    runs_per_batch = median(m.runs_per_batch for m in earlier) if earlier else 1.0
    edit_s = median(m.edit_s_per_batch for m in earlier) if earlier else 0.0
    runs = max(len(todo), round(len(todo) * runs_per_batch))
    budget = sum(job.config.max_failed_attempts + split_budget(len(b.files)) for b in todo)
    tokens = 0
    if rules_for(job.spec.recipe).uses_model:
        measured = [m.tokens_per_batch for m in earlier if m.tokens_per_batch]
        per_batch = median(measured) if measured else \
            history.scope_bytes * TOKENS_PER_BYTE * LLM_ROUNDS / max(1, len(job.batches))
        tokens = round(per_batch * len(todo))
    basis = "the baseline run" if job.baseline else "no baseline run"
    if earlier:
        basis += f" and {len(earlier)} earlier {'job' if len(earlier) == 1 else 'jobs'} on this " \
            "repository"
    elif rules_for(job.spec.recipe).uses_model:
        basis += "; no earlier job measured tokens, so from the files' size"
    return Forecast(runs=runs, runs_budget=max(budget, runs), run_s=round(run_s, 3),
                    wall_s=round(runs * run_s + len(todo) * edit_s, 1), tokens=tokens,
                    basis=basis)


def actual(job: Job) -> Actual | None:
    """What the batches took: their validation runs (one an attempt that reached validation, and
    each split's subsets), the wall time from the first attempt to the last, the model tokens."""
    validate = [list(argv) for argv in job.config.validate_argvs()]
    attempts = [a for b in job.batches for a in b.attempts]
    if not attempts:
        return None
    runs = sum(1 for a in attempts if any(c.argv in validate for c in a.commands))
    runs += int(sum(batch_figures(b).get(SPLIT_VALIDATIONS, 0) for b in job.batches))
    ends = [a.finished_at for a in attempts if a.finished_at is not None]
    wall = (max(ends) - min(a.started_at for a in attempts)).total_seconds() if ends else 0.0
    return Actual(runs=runs, wall_s=round(wall, 1), tokens=model_tokens(job))


def model_tokens(job: Job) -> int:
    """The tokens the job's model calls spent, as the features give them (0 without a model)."""
    given = figures(job)
    return int(given.get(MODEL_TOKENS_IN, 0) + given.get(MODEL_TOKENS_OUT, 0))


def duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.0f} s" if seconds >= 10 else f"{seconds:.1f} s"
    if seconds < 3600:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def plan_lines(job: Job, history: History | None, stated: Forecast | None) -> list[str]:
    expected = stated or forecast(job, history or History())
    if expected is None:
        return []
    runs = "1 validation run" if expected.runs == 1 else f"{expected.runs} validation runs"
    lines = [f"forecast: {runs} (one a batch; at most "
             f"{expected.runs_budget} with every retry `max_failed_attempts` allows and the "
             f"splits of failing batches), about {duration(expected.wall_s)} in all "
             f"({duration(expected.run_s)} a run), from {expected.basis}"]
    if rules_for(job.spec.recipe).uses_model:
        lines.append(f"forecast of model tokens: about {expected.tokens:,}")
    return lines


def against_lines(job: Job, stated: Forecast | None) -> list[str]:
    """The note's forecast against the actual, once batches ran."""
    done = actual(job)
    if stated is None or done is None:
        return []
    line = (f"forecast against actual: validation runs {stated.runs} expected, {done.runs} run; "
            f"wall time about {duration(stated.wall_s)} expected, {duration(done.wall_s)} taken")
    if rules_for(job.spec.recipe).uses_model:
        line += f"; model tokens about {stated.tokens:,} expected, {done.tokens:,} used"
    return [line]
