"""Writing the change note into the job branch, in a commit of its own."""

from __future__ import annotations

from jobs.domain.change_note import render_note
from jobs.engine.context import JobContext


def commit_note(engine: JobContext, label: str) -> str | None:
    """Rewrite the note at the branch head and commit it; None when it did not change."""
    job = engine.job
    worktree = engine.worktree
    worktree.reset(job.head_sha)
    path = worktree.path / job.note_path
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_note(job, now=engine.now(), voice=engine.services.voice), encoding="utf-8")
    worktree.stage_files([job.note_path])
    tree = worktree.write_tree()
    if tree == worktree.head_tree():
        return None
    message = (
        f"stepwise(#{job.number}): change note — {label}\n\n"
        f"Stepwise-Job: {job.id}\nStepwise-Note: {label}\n"
    )
    commit = worktree.commit_tree(tree, job.head_sha, message)
    commit = engine.services.repository.advance_branch(job.branch, commit, job.head_sha)
    job.head_sha = commit
    job.note_commit = commit
    engine.event("note", f"change note committed ({label})")
    engine.save(touched=())
    return commit
