"""What a committed batch changed, and for a `command` job what its codemod reported."""

from __future__ import annotations

from jobs.adapters.sandbox_view import REPO_MOUNT
from jobs.inputs.spec import Recipe
from jobs.kernel.job import Batch, Job
from jobs.kernel.records import Attempt, line_text
from jobs.notes.note_parts import codemod_findings, codemod_summary, target_key
from jobs.ports import Workspace


def changed_by(repository: Workspace, commit: str | None) -> list[str]:
    """The files `commit` changed (a codemod may leave some of its batch alone)."""
    if commit is None:
        return []
    out = repository.git("-c", "core.quotepath=false", "diff-tree", "--no-commit-id",
                         "--name-only", "-r", "-z", commit)
    return sorted(name for name in out.split("\0") if name)


def with_line_texts(repository: Workspace, commit: str | None,
                    findings: list[str]) -> list[str]:
    """Each `path:line — message` finding with the text of its line in `commit` appended."""
    parsed = [target_key(item) for item in findings]
    if commit is None or not findings:
        return findings
    texts = repository.read_texts(commit, sorted({path for path, _, _ in parsed}))
    shown = []
    for item, (path, line, _) in zip(findings, parsed, strict=True):
        text = line_text(texts.get(path), line)
        shown.append(f"{item} (the line: {text})" if text else item)
    return shown


def record_changes(repository: Workspace, job: Job, batch: Batch, attempt: Attempt,
                   changed: list[str] | None = None) -> None:
    """Note the files the batch's commit changed (`changed` when the attempt staged and
    committed them itself: the commit is exactly that diff against its parent); a `command`
    batch's summary says in words what the codemod reported, and the findings it printed
    become leftovers."""
    batch.changed_files = sorted(changed) if changed is not None \
        else changed_by(repository, batch.commit)
    if job.spec.recipe is not Recipe.COMMAND or not attempt.commands:
        return
    codemod = attempt.commands[0]  # the edit's command comes before validation's
    worktree = repository.state_dir / "worktrees" / f"issue-{job.number}"
    findings = with_line_texts(repository, batch.commit, codemod_findings(
        codemod.output_tail, batch.files, roots=(str(REPO_MOUNT), str(worktree))))
    batch.leftovers = sorted({*batch.leftovers, *findings}, key=target_key)
    batch.summary = codemod_summary(codemod, changed=batch.changed_files,
                                    planned=len(batch.files), findings=len(findings))
