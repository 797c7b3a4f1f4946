"""`batch_size: auto` in the loop: before a planned batch starts, the planned batches not
started yet are regrouped so that it has the size the outcomes so far call for (sizing.py).

Batches that started (or were set aside from a split) keep their numbers; the regrouped ones
are numbered on from the batch about to start, the set-aside batches after them, and the
milestones count the planned batches (`batches_per_milestone` of them each)."""

from __future__ import annotations

from jobs.engine.context import JobContext
from jobs.features.bisect.record import bisect_of, bisect_part
from jobs.features.bisect.sizing import milestones_from, next_size, regroup
from jobs.inputs.batch_sizes import batch_size_limit, is_auto
from jobs.kernel.job import Batch, Job
from jobs.kernel.model import BatchStatus, feature_status


def outcome_of(batch: Batch) -> bool | None:
    """How a started planned batch counts for the size: passed, failed (or split), neither."""
    if bisect_of(batch).split is not None or batch.status is BatchStatus.FAILED:
        return False
    held = feature_status(batch.status)  # CI's `awaiting_ci`: pushed after passing validation
    if batch.status in (BatchStatus.COMPLETED, BatchStatus.REVERTED) or (held and held.validated):
        return True
    return None


def not_started(batch: Batch) -> bool:
    return batch.status is BatchStatus.PENDING and not batch.attempts and \
        bisect_of(batch).split_from is None


def resize_before(engine: JobContext, batch: Batch) -> bool:
    """Regroup before `batch` starts (True: the batches changed, the loop picks again)."""
    job = engine.job
    if bisect_of(batch).auto_size or not not_started(batch) or \
            not is_auto(job.spec.batch_size, job.config.batch_size):
        return False
    limit = batch_size_limit(job.spec.batch_size_max, job.config.batch_size_max)
    planned = [b for b in job.batches if bisect_of(b).split_from is None]
    started = [b for b in planned if b.number < batch.number]
    waiting = [b for b in planned if b.number >= batch.number]
    if any(not not_started(b) for b in waiting):
        bisect_part(batch).auto_size = len(batch.files)  # not a plain run of unstarted batches: leave it
        engine.save(touched=[batch.number])
        return True
    size = next_size([outcome_of(b) for b in started], limit)
    files = [path for b in waiting for path in b.files]
    groups = regroup(files, size, limit)
    if [b.files for b in waiting] != groups:
        targets = _targets(engine, job, files)
        job.batches = started + _numbered(job, started, batch, groups, targets) + \
            [b for b in job.batches if bisect_of(b).split_from is not None]
        _renumber_set_aside(job)
    chosen = len(groups[0]) if groups else size  # fewer when fewer files are left
    bisect_part(job.batches[len(started)]).auto_size = chosen
    engine.event("plan", f"batch_size auto: batch {batch.number} gets {chosen} files")
    engine.save(touched=None)
    return True


def _targets(engine: JobContext, job: Job, files: list[str]) -> dict[str, int]:
    counts: dict[str, int] = dict.fromkeys(files, 0)
    for target in engine.runner.remaining(job, job.head_sha, files):
        counts[target.path] = counts.get(target.path, 0) + 1
    return counts


def _numbered(job: Job, started: list[Batch], first: Batch, groups: list[list[str]],
              targets: dict[str, int]) -> list[Batch]:
    taken = sum(1 for b in started if b.milestone == first.milestone)
    milestones = milestones_from(first.milestone, taken, len(groups),
                                 job.config.batches_per_milestone)
    return [Batch(number=first.number + index, milestone=milestone, files=group,
                  targets=sum(targets.get(path, 0) for path in group))
            for index, (group, milestone) in enumerate(zip(groups, milestones, strict=True))]


def _renumber_set_aside(job: Job) -> None:
    """Set-aside batches follow the planned ones, in the last planned milestone."""
    planned = [b for b in job.batches if bisect_of(b).split_from is None]
    last = max((b.milestone for b in planned), default=1)
    for index, batch in enumerate(job.batches):
        if bisect_of(batch).split_from is not None:
            batch.number, batch.milestone = index + 1, last
