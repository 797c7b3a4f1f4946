"""The final review: gather its evidence (merge, validation, leftovers), apply the verdict.

The verdict itself is pure: jobs/decisions/verdicts.py.
"""

from __future__ import annotations

from jobs.decisions.verdicts import judge_review, review_gate_report
from jobs.engine.attempt import run_commands
from jobs.engine.context import JobContext
from jobs.engine.discovery import scope_at, targets_at
from jobs.engine.note_commit import commit_note
from jobs.kernel import trailers
from jobs.kernel.model import Acceptance, BatchStatus, FailureCause, Gate, JobStatus
from jobs.kernel.records import CommandEvidence, FinalReview, Target, line_text
from jobs.notes.progress import render_card
from jobs.ports import Publication


def leftovers_at(engine: JobContext, sha: str) -> list[str]:
    """Every `find` match still in scope at `sha` (the branch's tree, recomputed), as
    `path:line — the line's text`; not in the files the plan left out (listed as such)."""
    job, repo = engine.job, engine.services.repository
    if not job.spec.find:
        return []
    left_out = {item.path for item in job.left_out}  # named once, as left out, with the rule
    scope = [path for path in scope_at(repo, sha, job.spec, job.config) if path not in left_out]
    found = targets_at(repo, sha, scope, job.spec.find)
    texts = repo.read_texts(sha, list(found)) if found else {}
    return [str(Target(path=path, line=line, text=line_text(texts.get(path), line)))
            for path, lines in found.items() for line in lines]


def validated_head(engine: JobContext, base_now: str) -> str:
    """The batch whose validated tree the head still is (only change-note commits came after
    its commit, and the base it was validated on is the current one), as "batch 5 (`abc1234`)";
    "" when the head must be validated again."""
    job, repo = engine.job, engine.services.repository
    last = None
    for commit in reversed(repo.commits(job.base_sha, job.head_sha)):
        if trailers.NOTE not in commit.trailers:
            last = commit
            break
    if last is None or last.trailers.get(trailers.JOB) != job.id:
        return ""
    number = last.trailers.get(trailers.BATCH, "")
    batch = next((b for b in job.batches if str(b.number) == number), None)
    if batch is None or batch.status is not BatchStatus.COMPLETED or batch.commit != last.sha:
        return ""
    if not repo.is_ancestor(base_now, last.sha):  # the base moved since it was validated
        return ""
    notes = job.config.notes_dir.rstrip("/") + "/"
    if any(not path.startswith(notes) for path in repo.changes(last.sha, job.head_sha)):
        return ""
    return f"batch {batch.number} (`{last.sha[:7]}`)"


def run_review(engine: JobContext) -> FinalReview:
    """Gather the final review's evidence (merge with the current base, setup, validation);
    the validation is not run again when the head is the tree the last batch validated."""
    job, repo = engine.job, engine.services.repository
    base_now = (repo.branch_head(job.base_branch) if job.base_branch != "HEAD" else None) \
        or job.base_sha
    reused = validated_head(engine, base_now)
    if reused:
        review = judge_review(job, base_now=base_now, merges=True, commands=[], failure=None,
                              leftovers=leftovers_at(engine, job.head_sha))
        review.reused_from = reused
        return review
    runner, worktree = engine.runner, engine.worktree
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
    accepted = job.take(Acceptance.FAILED_REVIEW)
    report = review_gate_report(review, accepted=accepted)
    if report is not None:
        engine.open(Gate.FAILURE, "the final review did not pass", report=report,
                    cause=FailureCause.FINAL_REVIEW)
        return
    job.set_status(JobStatus.COMPLETED)
    engine.event("completed", "final review done")
    engine.save()
    engine.run_hooks("at_end")
    commit_note(engine, "final")
    engine.publish(Publication.SUMMARY, render_card(job, fold_finished=False))
