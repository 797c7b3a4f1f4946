"""The planning step: adopt a changed issue, plan the work left, read the base commit's version
from git for the repository's version tools (the packaging files and `git describe`, read by
Stepwise from the trusted repository, never by sandboxed code; the rules are
jobs/kernel/git_versions.py), run the baseline, then continue or wait at the plan gate."""

from __future__ import annotations

from jobs.decisions.plan import build_plan
from jobs.engine.baseline import baseline_report, run_baseline
from jobs.engine.context import JobContext
from jobs.engine.discovery import contents_for_patterns, plan_scope
from jobs.inputs.batch_sizes import planned_batch_size
from jobs.inputs.spec import parse_issue
from jobs.kernel.git_versions import PACKAGING_FILES, GitVersion, git_version
from jobs.kernel.job import Batch
from jobs.kernel.model import FINISHED_BATCH_STATUSES, Gate, JobStatus
from jobs.kernel.plan_history import PlannedBatch, PlanRecord, anything_tried
from jobs.notes.note_parts import baseline_failure
from jobs.notes.progress import nothing_to_do, render_plan
from jobs.ports import Publication, Workspace


def apply_pending_issue(engine: JobContext) -> bool:
    """Adopt an issue text that changed since the job was planned (see `spec_changed`)."""
    pending, engine.job.pending_issue = engine.job.pending_issue, None
    if pending is None:
        return False
    issue = parse_issue(pending.title, pending.body)
    job = engine.job
    job.title, job.spec, job.spec_text = issue.title, issue.spec, issue.spec_text
    job.spec_digest, job.approved_digest = issue.spec.digest(), None
    engine.event("plan", "re-planning with the changed spec")
    return True


def record_plan(engine: JobContext, *, spec_changed: bool) -> None:
    """Write the earlier plan's batches down before a re-plan replaces them, and start the new
    plan's entry (jobs/kernel/plan_history.py); an earlier plan where nothing was tried is
    replaced instead."""
    job = engine.job
    if not job.plans and job.batches:  # a job recorded before plans were kept
        job.plans.append(PlanRecord(number=1, planned_at=job.created_at, reason="first plan",
                                    spec_digest=job.spec_digest))
    if job.plans:
        job.plans[-1].batches = [
            PlannedBatch(number=b.number, files=list(b.files), status=str(b.status),
                         commit=b.commit, attempts=len(b.attempts)) for b in job.batches]
        if not anything_tried(job.plans[-1].batches):
            job.plans.pop()
    reason = "first plan" if not job.plans else \
        "the spec changed" if spec_changed else "planned again"
    job.plans.append(PlanRecord(number=len(job.plans) + 1, planned_at=engine.now(),
                                reason=reason, spec_digest=job.spec_digest))

def end_with_nothing_to_do(engine: JobContext) -> None:
    """A plan without a batch (a re-plan: a first plan is refused at start) ends the job at once:
    completed, nothing run or committed, and its branch, which never got a commit, removed."""
    job, repo = engine.job, engine.services.repository
    if job.head_sha == job.base_sha and repo.branch_head(job.branch) == job.base_sha:
        repo.drop_branch(job.branch, job.base_sha)
    job.baseline, job.baseline_ok = [], None  # an earlier plan's: this plan runs none
    job.set_status(JobStatus.RUNNING)
    job.set_status(JobStatus.COMPLETED)
    engine.event("completed", nothing_to_do(job))
    engine.save()
    engine.publish(Publication.SUMMARY, render_plan(job, voice=engine.services.voice))


def plan(engine: JobContext) -> None:
    """Plan the work left: a re-plan keeps finished batches and never redoes their files."""
    record_plan(engine, spec_changed=apply_pending_issue(engine))
    job, repo = engine.job, engine.services.repository
    head = job.head_sha
    finished = [b for b in job.batches if b.status in FINISHED_BATCH_STATUSES]
    scope, job.left_out = plan_scope(repo, head, job.spec, job.config)
    done = {path for b in finished for path in b.files}
    todo = [path for path in scope if path not in done]
    planned = build_plan(
        scope_files=todo, contents=contents_for_patterns(repo, head, todo, job.spec.find),
        find=job.spec.find,
        batch_size=planned_batch_size(job.spec.batch_size, job.config.batch_size,
                                      spec_max=job.spec.batch_size_max,
                                      config_max=job.config.batch_size_max),
        batches_per_milestone=job.config.batches_per_milestone,
    )
    first_milestone = max((b.milestone for b in finished), default=0)
    # The kept milestones are behind the job: approving the new plan covers them.
    job.approved_milestones = sorted({*job.approved_milestones, *range(1, first_milestone + 1)})
    job.batches = finished + [
        Batch(number=len(finished) + p.number, milestone=first_milestone + p.milestone,
              files=list(p.files), targets=p.targets)
        for p in planned.batches
    ]
    job.scope_files = scope
    job.target_count = planned.target_count
    if not job.batches:  # `find` matches nothing: no gate, no baseline, nothing to commit
        end_with_nothing_to_do(engine)
        return
    if job.git_version is None:  # before the first command: the runner's policy carries it
        job.git_version = base_git_version(repo, job.base_sha)
    engine.run_hooks("planned")  # llm: the edit format the plan names
    run_baseline(engine)
    engine.event("plan", f"{len(planned.batches)} batches planned"
               + (f", {len(finished)} finished batches kept" if finished else ""))
    engine.publish(Publication.PLAN, render_plan(job, voice=engine.services.voice))
    # An issue written or edited by someone without write access is always shown first.
    trusted_skip = (not job.config.require_plan_approval and job.baseline_ok is not False
                    and not job.untrusted_spec)
    if job.approved_digest == job.spec_digest:
        trusted_skip = True  # approved before (a job rebuilt from its branch)
    if trusted_skip:
        job.approved_digest = job.spec_digest
        job.set_status(JobStatus.RUNNING)
        engine.save()
    elif job.baseline_ok is False:
        engine.open(Gate.PLAN, "the plan is ready, but " + baseline_failure(job),
                  report=baseline_report(job))
    else:
        engine.open(Gate.PLAN, "the plan is ready for review")


def base_git_version(repository: Workspace, sha: str) -> GitVersion | None:
    """What the job's commands are told of the version at `sha`; None when the repository uses
    no git-version tool."""
    files = repository.read_texts(sha, PACKAGING_FILES)
    if not any(files.values()):
        return None
    return git_version(files, described=repository.describe(sha), sha=sha)
