"""The change note (`docs/agent-changes/<timestamp>-issue-<N>.md`), rendered from the job record:
goal, scope and not-doing list, instructions, baseline, milestones, each batch with its files,
summary, commit and validation, skipped and reverted batches, base merges, model usage, CI, the
final review and the leftovers for a human."""

from __future__ import annotations

from datetime import datetime

from jobs.basics import markdown_safe as md
from jobs.basics.voice import LOCAL, Voice
from jobs.inputs.programs import split_command
from jobs.kernel.feature_parts import NoteSlot, note_sections
from jobs.kernel.human_commits import commits_by_people_lines
from jobs.kernel.job import Batch, Job
from jobs.kernel.model import BatchStatus, JobStatus, feature_status
from jobs.kernel.plan_history import history_lines
from jobs.notes.note_parts import (
    batch_commands,
    cell,
    command_line,
    failed_attempt_files,
    passed_after_failing,
    reverted_lines,
    short,
    shown_files,
)
from jobs.notes.progress import baseline_label, part_of_line, sandbox_lines
from jobs.notes.tally import outcome, tally


def render_note(job: Job, *, now: datetime, voice: Voice = LOCAL) -> str:
    """The change note committed under `notes_dir`: what was done, with its evidence."""
    spec = job.spec
    counted = tally(job)
    lines = [
        f"# Stepwise change note: {md.text(job.title)} (#{job.number})",
        "",
        f"- Job: `{job.id}`, status `{outcome(job, counted)}`, written {now:%Y-%m-%d %H:%M:%SZ}",
        f"- Batches: {counted.batches_line()}; {counted.files_line()}",
        f"- Started: {job.created_at:%Y-%m-%d %H:%M:%SZ} on {md.code(job.base_branch)} at "
        f"`{short(job.base_sha)}`; branch {md.code(job.branch)}",
        f"- Recipe {md.code(spec.recipe)}; paths {md.codes(spec.paths)}"
        + (f"; excluded {md.codes(spec.exclude)}" if spec.exclude else ""),
        f"- Baseline validation on `{short(job.baseline_sha or job.base_sha)}`: "
        f"{baseline_label(job)}",
        *sandbox_lines(job),
        *([f"- {line}"] if (line := part_of_line(job)) else []),
        "",
        "## Goal",
        "",
        md.text(job.title),
        "",
        "## Not doing",
        "",
        *([f"- {md.message(item)}" for item in spec.not_doing] or ["- (nothing listed)"]),
    ]
    if job.instructions:
        lines += ["", "## Standing instructions", "", *[f"- {md.message(i)}" for i in job.instructions]]
    lines += ["", "## Batches", "",
              "| Milestone | Batch | Status | Files | Summary | Commit | Validation |",
              "|---|---|---|---|---|---|---|"]
    codemod = split_command(spec.run)[0] if spec.run else None
    for batch in job.batches:
        lines.append(
            f"| {batch.milestone} | {batch.number} | {batch.status} | "
            f"{'<br>'.join(cell(file_entry(batch, f)) for f in shown_files(batch))} | "
            f"{cell(batch.summary) or '—'} | "
            f"{short(batch.commit)} | {cell(batch_commands(batch, codemod))} |"
        )
    lines += history_lines(job.plans)
    lines += note_sections(NoteSlot.AFTER_BATCHES, job)  # split batches (bisect)
    lines += _reasons(job, BatchStatus.SKIPPED, "Skipped")
    lines += reverted_lines(job)
    lines += commits_by_people_lines(job.human_commits)
    lines += passed_after_failing(job)
    lines += failed_attempt_files(job)
    if job.left_out:
        lines += ["", "## Left out", "", *[f"- {md.code(item.path)} — {md.message(item.rule)}"
                                           for item in job.left_out]]
    lines += note_sections(NoteSlot.AFTER_LEFT_OUT, job)  # base merges (base_moves), model usage (llm)
    lines += note_sections(NoteSlot.EVIDENCE, job)
    lines += _review(job)
    lines += ["", "## Leftovers for a human to confirm", ""]
    lines += [*(f"- {item.words()}" for item in counted.undone),
              *(f"- {md.code(item)}" for item in counted.leftovers)] or ["- none"]
    if job.status is JobStatus.CANCELLED:
        # a feature's status (CI's `awaiting_ci`: pushed, its verdict not in) is not done
        undone = [b.number for b in job.batches if b.status in (
            BatchStatus.PENDING, BatchStatus.FAILED) or feature_status(b.status) is not None]
        lines += ["", "## Cancelled", "",
                  f"The job was cancelled; batches not done: {', '.join(map(str, undone)) or 'none'}."]
    lines += ["", "Undo any batch by reverting its commit ({{revert <batch>}})."]
    return voice.speak("\n".join(lines)) + "\n"


def file_entry(batch: Batch, path: str) -> str:
    """A file of a batch with its one-line summary (the model's, for recipe llm), if any."""
    summary = batch.file_summaries.get(path)
    return f"{path} — {summary}" if summary else path


def _reasons(job: Job, status: BatchStatus, title: str) -> list[str]:
    chosen = [b for b in job.batches if b.status is status]
    if not chosen:
        return []
    return ["", f"## {title}", "", *[f"- batch {b.number}: {md.message(b.reason or 'no reason given')}"
                                     for b in chosen]]


def _review(job: Job) -> list[str]:
    review = job.final_review
    if review is None:
        return []
    lines = ["", "## Final review", "",
             f"- Branch head merged with base `{short(review.merged_with_base)}`: "
             + ("passes" if review.ok else "does NOT pass")]
    lines += [f"- {command_line(c)}" for c in review.commands]
    if review.reused_from:
        lines.append(f"- Validation not run again: the head's tree is the one {review.reused_from} "
                     "validated (only the change note changed since) and the base has not moved")
    if review.unfinished_batches:
        lines.append(f"- Unfinished batches: {', '.join(map(str, review.unfinished_batches))}")
    return lines
