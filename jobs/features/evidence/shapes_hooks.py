"""The edit-shapes facet's hooks: each validated batch's shapes recorded before its commit; the
plan's dry run of a deterministic recipe on the first batch (its shapes shown at the plan gate);
a milestone of known shapes passing its gate on its own (`gates.auto_approve_known_shapes`)."""

from __future__ import annotations

from jobs.decisions.edit_shapes import summarize
from jobs.engine.attempt_outcome import AttemptOutcome
from jobs.engine.context import JobContext, Outcome
from jobs.engine.validation_hooks import TreeUnderTest
from jobs.features.evidence.facets import FACETS
from jobs.features.evidence.record import AutoPassed, BatchEvidence, DryRun, JobEvidence
from jobs.features.evidence.shapes_texts import PASSED_ON_ITS_OWN, auto_passed
from jobs.inputs.recipes import rules_for
from jobs.kernel.job import Batch, Job
from jobs.kernel.model import FINISHED_BATCH_STATUSES
from jobs.kernel.records import Attempt
from jobs.ports import Publication
from jobs.recipes import EditError, EditRequest


def record_shapes(job: Job, batch: Batch, attempt: Attempt,
                  under_test: TreeUnderTest) -> AttemptOutcome | None:
    """Record the shapes of the tree about to be committed; never stops it."""
    batch.part(BatchEvidence).shapes = summarize(under_test.diff)
    return None


def dry_run(engine: JobContext) -> None:
    """A deterministic recipe's edit of the first batch, made and thrown away, so the plan shows
    the kinds of edit the job will make before anyone approves it (llm: no dry run)."""
    job = engine.job
    pending = next((b for b in job.batches if b.status not in FINISHED_BATCH_STATUSES), None)
    if not rules_for(job.spec.recipe).deterministic or pending is None:
        return
    runner = engine.runner
    worktree = runner.worktree
    try:
        worktree.reset(job.head_sha)
        targets = runner.remaining(job, job.head_sha, pending.files)
        if rules_for(job.spec.recipe).needs_environment and runner.ensure_setup(job) is not None:
            return  # setup fails: the baseline says so
        runner.editor.apply(EditRequest(worktree=worktree.path, files=tuple(pending.files),
                                        spec=job.spec, goal=job.title, targets=tuple(targets),
                                        instructions=tuple(job.instructions),
                                        policy=runner.policy))
        worktree.stage_files(pending.files)
        diff = worktree.staged_diff()
    except EditError:
        return  # the batch will fail the same way, with its report, when it runs
    finally:
        worktree.reset(job.head_sha)
    job.part(JobEvidence).preview = DryRun(batch=pending.number, files=len(pending.files),
                                           shapes=summarize(diff))


def holds_of(job: Job, milestone: int) -> list[str]:
    """Why the milestone's batches need a person, facet by facet (none: it may pass alone)."""
    return [f"batch {batch.number}: {why}" for batch in job.milestone_batches(milestone)
            for facet in FACETS if facet.holds is not None if (why := facet.holds(job, batch))]


def pass_known_milestone(engine: JobContext, milestone: int) -> Outcome | None:
    """With `gates.auto_approve_known_shapes`, a finished milestone that is not the last whose
    batches no facet holds passes its gate on its own; the card and the note say so."""
    job = engine.job
    batches = job.milestone_batches(milestone)
    if not job.config.gates.auto_approve_known_shapes or milestone >= job.milestone_count or \
            milestone in job.approved_milestones or not batches or \
            any(b.status not in FINISHED_BATCH_STATUSES for b in batches) or \
            holds_of(job, milestone):
        return None
    job.approved_milestones.append(milestone)
    job.part(JobEvidence).auto_passed = AutoPassed(milestones=[*auto_passed(job), milestone])
    said = f"milestone {milestone} {PASSED_ON_ITS_OWN}"
    engine.event("gate", said)
    engine.save(touched=())
    engine.publish(Publication.NOTICE, said)
    return None
