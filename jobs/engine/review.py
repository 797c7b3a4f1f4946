"""The final review: validate the branch merged with the current base, list leftovers, then finish."""

from __future__ import annotations

from typing import TYPE_CHECKING

from jobs.adapters.discovery import scope_at, targets_at
from jobs.domain.errors import ErrorInfo, RetryClass
from jobs.domain.model import FINISHED_BATCH_STATUSES, FinalReview, Gate, JobStatus
from jobs.domain.notes import render_card
from jobs.engine.attempt import run_commands
from jobs.engine.note_commit import commit_note
from jobs.ports import Publication

if TYPE_CHECKING:
    from jobs.engine.engine import Engine


def leftovers_at(engine: Engine, sha: str) -> list[str]:
    """Every `find` match still in scope at `sha`, as `path:line`."""
    job, repo = engine.job, engine.services.repository
    if not job.spec.find:
        return []
    found = targets_at(repo, sha, scope_at(repo, sha, job.spec, job.config), job.spec.find)
    return [f"{path}:{line}" for path, lines in found.items() for line in lines]


def run_review(engine: Engine) -> FinalReview:
    job, repo = engine.job, engine.services.repository
    runner, worktree = engine.runner, engine.worktree
    base_now = (repo.branch_head(job.base_branch) if job.base_branch != "HEAD" else None) \
        or job.base_sha
    worktree.reset(job.head_sha)
    problems: list[str] = []
    if not repo.is_ancestor(base_now, job.head_sha):
        merged = worktree.merged_tree(base_now)
        if merged is None:
            problems.append(f"the branch does not merge cleanly with `{job.base_branch}`")
        else:
            worktree.restore(merged)
    commands = []
    if not problems:
        failure = runner.ensure_setup(job)
        if failure is not None:
            commands, problems = [failure], ["a setup command failed"]
        else:
            commands, failed = run_commands(runner.sandbox, job.config.validate_argvs(),
                                            cwd=worktree.path, policy=runner.policy)
            if failed is not None:
                problems.append(f"`{failed.display}` exited {failed.exit_code}")
    worktree.reset(job.head_sha)
    unfinished = [b.number for b in job.batches if b.status not in FINISHED_BATCH_STATUSES]
    return FinalReview(merged_with_base=base_now, commands=commands,
                       ok=not problems and not unfinished,
                       leftovers=leftovers_at(engine, job.head_sha),
                       unfinished_batches=unfinished)


def finish(engine: Engine) -> None:
    """Review, then complete with the final note, or stop at a failure gate."""
    job = engine.job
    review = run_review(engine)
    job.final_review = review
    accepted, job.accept_review = job.accept_review, False
    if not review.ok and not accepted:
        failing = [c for c in review.commands if c.exit_code != 0 or c.timed_out]
        tail = failing[-1].output_tail if failing else ""
        engine.open(Gate.FAILURE, "the final review did not pass", report=ErrorInfo(
            code="final_review_failed", retry_class=RetryClass.NEEDS_HUMAN,
            message="validation of the branch merged with the current base failed"
            if failing else "the branch does not merge cleanly with the base",
            hint="push a fix to the branch and `retry`, or `approve` to finish anyway",
            evidence={"output_tail": tail},
        ))
        return
    job.set_status(JobStatus.COMPLETED)
    engine.event("completed", "final review done")
    engine.save()
    commit_note(engine, "final")
    engine.publish(Publication.SUMMARY, render_card(job, fold_finished=False))
