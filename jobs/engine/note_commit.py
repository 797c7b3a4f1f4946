"""Writing the change note into the job branch, in a commit of its own."""

from __future__ import annotations

from jobs.basics.errors import StepwiseError
from jobs.basics.voice import local_voice
from jobs.engine.context import JobContext
from jobs.kernel import trailers
from jobs.notes.change_note import render_note

NOTE_HINT = ("the change note goes to `notes_dir` (.github/stepwise.yml, default "
             "docs/agent-changes), which the job's head holds as a link or a file: replace it "
             "with a directory or set `notes_dir` to another one, then run the job again")


def note_at_head(engine: JobContext, label: str) -> bool:
    """Whether the branch head is already this job's note commit for `label` (a record rebuilt
    after it was lost adopts that commit: committing the note again would push it twice)."""
    job = engine.job
    if job.note_commit is None or job.note_commit != job.head_sha:
        return False
    head = engine.services.repository.commits(f"{job.head_sha}^", job.head_sha)
    return any(c.sha == job.head_sha and c.trailers.get(trailers.JOB) == job.id
               and c.trailers.get(trailers.NOTE) == label for c in head)


def commit_note(engine: JobContext, label: str) -> str | None:
    """Rewrite the note at the branch head and commit it; None when it did not change, or when
    the head already is the note for `label`."""
    job = engine.job
    if note_at_head(engine, label):
        engine.event("note", f"change note ({label}) already on the branch as "
                     f"{job.head_sha[:7]}; adopted")
        return None
    worktree = engine.worktree
    worktree.reset(job.head_sha)
    voice = engine.services.voice
    if not voice.on_github:  # committed: the checkout's path on this machine is nobody else's
        voice = local_voice(f"--repo . --number {job.number}")
    try:  # outside the sandbox, in the repository's tree: a link is refused, never followed
        worktree.put_file(job.note_path,
                          render_note(job, now=engine.now(), voice=voice).encode("utf-8"))
    except StepwiseError as exc:
        if exc.code == "unsafe_path":
            exc.hint = NOTE_HINT
        raise
    worktree.stage_files([job.note_path])
    tree = worktree.write_tree()
    if tree == worktree.head_tree():
        return None
    message = (
        f"stepwise(#{job.number}): change note — {label}\n\n"
        + trailers.trailer_lines((trailers.JOB, job.id), (trailers.NOTE, label))
    )
    commit = worktree.commit_tree(tree, job.head_sha, message)
    commit = engine.land(commit)
    job.head_sha = commit
    job.note_commit = commit
    engine.event("note", f"change note committed ({label})")
    engine.save(touched=())
    return commit
