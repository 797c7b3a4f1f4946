"""The final review: gather its evidence (merge, validation, leftovers), apply the verdict.

The verdict itself is pure: jobs/domain/verdicts.py.
"""

from __future__ import annotations

from jobs.adapters.discovery import scope_at, targets_at
from jobs.domain.model import Gate, JobStatus
from jobs.domain.notes import render_card
from jobs.domain.records import CommandEvidence, FinalReview
from jobs.domain.verdicts import judge_review, review_gate_report
from jobs.engine.attempt import run_commands
from jobs.engine.context import JobContext
from jobs.engine.note_commit import commit_note
from jobs.ports import Publication


def leftovers_at(engine: JobContext, sha: str) -> list[str]:
    """Every `find` match still in scope at `sha`, as `path:line`."""
    job, repo = engine.job, engine.services.repository
    if not job.spec.find:
        return []
    found = targets_at(repo, sha, scope_at(repo, sha, job.spec, job.config), job.spec.find)
    return [f"{path}:{line}" for path, lines in found.items() for line in lines]


def run_review(engine: JobContext) -> FinalReview:
    """Gather the final review's evidence (merge with the current base, setup, validation)."""
    job, repo = engine.job, engine.services.repository
    runner, worktree = engine.runner, engine.worktree
    base_now = (repo.branch_head(job.base_branch) if job.base_branch != "HEAD" else None) \
        or job.base_sha
    worktree.reset(job.head_sha)
    merges = True
    if not repo.is_ancestor(base_now, job.head_sha):
        merged = worktree.merged_tree(base_now)
        merges = merged is not None
        if merged is not None:
            worktree.restore(merged)
    commands: list[CommandEvidence] = []
    failure = setup_failure = None
    if merges:
        setup_failure = runner.ensure_setup(job)
        if setup_failure is not None:
            commands = [setup_failure]
        else:
            commands, failure = run_commands(runner.sandbox, job.config.validate_argvs(),
                                             cwd=worktree.path, policy=runner.policy)
    worktree.reset(job.head_sha)
    return judge_review(job, base_now=base_now, merges=merges, commands=commands,
                        failure=failure, setup_failed=setup_failure is not None,
                        leftovers=leftovers_at(engine, job.head_sha))


def finish(engine: JobContext) -> None:
    """Review, then complete with the final note, or stop at a failure gate."""
    job = engine.job
    review = run_review(engine)
    job.final_review = review
    accepted, job.accept_review = job.accept_review, False
    report = review_gate_report(review, accepted=accepted)
    if report is not None:
        engine.open(Gate.FAILURE, "the final review did not pass", report=report)
        return
    job.set_status(JobStatus.COMPLETED)
    engine.event("completed", "final review done")
    engine.save()
    commit_note(engine, "final")
    engine.publish(Publication.SUMMARY, render_card(job, fold_finished=False))
