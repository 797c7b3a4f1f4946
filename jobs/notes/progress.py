"""Pure renderers: the plan, the progress card and gate prompts, from the job record (the change
note is jobs/notes/change_note.py)."""

from __future__ import annotations

import re
import shlex
from collections import Counter
from collections.abc import Callable, Sequence
from datetime import UTC

from jobs.basics import markdown_safe as md
from jobs.basics.voice import LOCAL, Voice
from jobs.decisions.plan import nothing_matches_words
from jobs.kernel.feature_parts import (
    card_batch_words,
    card_closing_lines,
    card_milestone_lines,
    card_status_lines,
    gate_lines,
    plan_lines,
)
from jobs.kernel.gates import gate_choices
from jobs.kernel.git_versions import version_lines
from jobs.kernel.job import Batch, Job
from jobs.kernel.model import BatchStatus, Gate, JobStatus, batch_statuses, feature_status
from jobs.kernel.outbox import refused_note, waiting_note
from jobs.notes.note_parts import (
    artifact_lines,
    baseline_network_cause,
    batch_size_words,
    code_label,
    command_line,
    kept_label,
    left_out_lines,
    output_block,
    plural,
)
from jobs.notes.note_parts import (
    short as short,
)
from jobs.notes.tally import outcome, tally

FINISHED = frozenset({BatchStatus.COMPLETED, BatchStatus.SKIPPED, BatchStatus.REVERTED})

STATUS_MARKS = {
    BatchStatus.PENDING: "·",
    BatchStatus.IN_PROGRESS: "…",
    BatchStatus.COMPLETED: "✓",
    BatchStatus.FAILED: "✗",
    BatchStatus.SKIPPED: "↷",
    BatchStatus.REVERTED: "↺",
}

def status_mark(status: BatchStatus) -> str:
    """A batch's mark on the card (a feature's status brings its own: CI's `awaiting_ci` ⧗)."""
    row = feature_status(status)
    return row.mark if row is not None else STATUS_MARKS[status]


RATE_LIMIT_WAIT = "Waiting for GitHub's rate limit until"


def files_label(files: Sequence[str], limit: int = 3, *, markdown: bool = True) -> str:
    """The first `limit` files and how many more; `markdown=False` for plain text (a commit
    subject: no Markdown escapes)."""
    shown = ", ".join(md.text(name) if markdown else name for name in files[:limit])
    return shown if len(files) <= limit else f"{shown} and {len(files) - limit} more"


def network_lines(job: Job) -> list[str]:
    """Who may use the network, and where to: `network_allow`, or each host of the default with
    the reason it is admitted (and the configured indexes left out, with why)."""
    config = job.config
    if not config.network:
        return []
    who = "setup only" if config.network == "setup" else "every command"
    if config.network_allow:
        return [f"- Network: {who}, through Stepwise's egress proxy, to "
                f"{md.codes(config.network_allow)} (`network_allow`)"]
    admitted = [f"{md.code(h.host)}: {md.message(h.why)}" for h in job.network_hosts
                if not h.left_out]
    hosts = "; ".join(admitted) if admitted else \
        "no host (no Python files, `package.json` or configured package index)"
    lines = [f"- Network: {who}, through Stepwise's egress proxy, to {hosts}"
             + (" (the default: `network_allow` is empty)" if admitted else "")]
    lines += [f"- Not admitted: {md.code(h.host)} ({md.message(h.why)}): {md.message(h.left_out)}"
              for h in job.network_hosts if h.left_out]
    return lines


def config_source_lines(job: Job) -> list[str]:
    """Local mode: say when the config is the checkout's uncommitted one."""
    if not job.config_source:
        return []
    return [f"- Config: `.github/stepwise.yml` from the {job.config_source} (it differs from "
            f"the one committed at `{short(job.base_sha)}`)"]


def render_plan(job: Job, *, voice: Voice = LOCAL) -> str:
    spec = job.spec
    lines = [
        f"## Plan for #{job.number}: {md.text(job.title)}",
        "",
        f"- Recipe: {md.code(spec.recipe)}" + (f", run {md.code(spec.run)}" if spec.run else ""),
        f"- Paths: {md.codes(spec.paths)}"
        + (f"; excluding {md.codes(spec.exclude)}" if spec.exclude else ""),
    ]
    if spec.find:
        lines.append(f"- Find: {md.codes(spec.find)}")
    if spec.replace is not None:
        lines.append(f"- Replace with: {md.code(spec.replace)}")
    lines += [
        f"- Done when: {md.code(spec.done_when)}",
        f"- Files in scope: {len(job.scope_files)}" + (
            f"; targets: {job.target_count} in {sum(len(b.files) for b in job.batches)} files"
            if spec.find else "; every file in scope is batched (no `find`, so no targets)"),
        f"- {plural(len(job.batches), 'batch')} in {plural(job.milestone_count, 'milestone')} "
        f"({batch_size_words(job)}, "
        f"{job.config.batches_per_milestone} batches per milestone)",
        f"- Validation: {md.codes(job.config.validate_commands) or 'none'}",
        *config_source_lines(job),
        *version_lines(job.git_version, base=job.base_sha, sandboxed=not unsandboxed(job)),
        *sandbox_lines(job),
        f"- Baseline on `{short(job.baseline_sha or job.base_sha)}`: {baseline_label(job)}",
        f"- Branch: {md.code(job.branch)}",
        *plan_lines(job),  # the features' (CI: what it waits for; llm; environments)
        *network_lines(job),
    ]
    failing = [c for c in job.baseline if c.exit_code != 0 or c.timed_out]
    if job.baseline_ok is False and failing:
        lines += ["", *output_block(failing[-1])]
    kept = [b for b in job.batches if b.status in FINISHED]
    if kept:
        lines += ["", f"Kept from before the re-plan: {kept_label(kept)}; their files are not "
                  "planned again (revert a batch to have it undone)."]
    lines += left_out_lines(job)
    if spec.not_doing:
        lines += ["", "Not doing:", *[f"- {md.message(item)}" for item in spec.not_doing]]
    listed = 0
    for milestone in range(1, job.milestone_count + 1):
        batches = job.milestone_batches(milestone)
        if listed + len(batches) > PLAN_BATCH_LINES and listed:
            rest = [b for b in job.batches if b.milestone >= milestone]
            lines += ["", f"… and {len(rest)} more batches in milestones {milestone}–"
                      f"{job.milestone_count} ({sum(len(b.files) for b in rest)} files"
                      + (f", {sum(b.targets for b in rest)} targets)" if spec.find else ")")]
            break
        lines += ["", f"### Milestone {milestone}"]
        for batch in batches:
            kept_mark = f" — {batch.status}, kept" if batch.status in FINISHED else ""
            targets = f" ({plural(batch.targets, 'target')})" if spec.find else ""
            lines.append(f"- batch {batch.number}: {code_label(batch.files, 5)}"
                         f"{targets}{kept_mark}")
        listed += len(batches)
    if not job.batches:
        lines += ["", f"Nothing to do: {nothing_to_do(job)}."]
    return voice.speak("\n".join(lines))


def batch_counts(job: Job) -> str:
    """"batches 4/7 completed" while it works; once every batch is finished the counts agree
    with what happened: "4 batches changed files, 3 had nothing to change, 1 skipped" (the one
    count every surface shows: jobs/notes/tally.py)."""
    return tally(job).batches_line()




def nothing_to_do(job: Job, *, where: str = "") -> str:
    """Why a plan has no batch (a re-plan: the job then ends at once, nothing made); `where`
    names the repository (default: the commit and the base branch)."""
    where = where or f"at {short(job.head_sha)} (branch {job.base_branch})"
    return (f"{nothing_matches_words(job.spec, len(job.scope_files), where)}, so the job ends "
            "here and nothing was committed")


UNSANDBOXED = ("- Sandbox: none — bubblewrap is not available here, so setup and validation run "
               "unsandboxed (a scrubbed environment and timeouts only); install bubblewrap "
               "(Debian `bubblewrap`) to isolate them")


def unsandboxed(job: Job) -> bool:
    """Whether the job's commands ran without a sandbox (their evidence says so)."""
    ran = [*job.baseline, *(c for b in job.batches for a in b.attempts for c in a.commands)]
    return bool(ran) and not any(command.isolated for command in ran)


SANDBOXED = ("- Sandbox: bubblewrap — the machine read-only, the worktree writable at "
             "`/tmp/stepwise/repo`, a private `/tmp`, `HOME` and process space, `.git` and "
             "Stepwise's state hidden, no network but Stepwise's egress proxy where `network` "
             "allows it; the tools and `env` paths outside that view are shown read-only")


def sandbox_lines(job: Job) -> list[str]:
    """What the job's commands ran in (plan, card, note): "Sandbox: none" and why, or what the
    bubblewrap sandbox is; nothing before any command ran."""
    if unsandboxed(job):
        return [UNSANDBOXED]
    ran = [*job.baseline, *(c for b in job.batches for a in b.attempts for c in a.commands)]
    return [SANDBOXED] if ran else []


_CONTROL_ISSUE = re.compile(r"[\w.-]+/[\w.-]+#\d+")


def part_of_line(job: Job) -> str:
    """The campaign the job is one part of (card and note; '' on its own): the App's control
    issue, which GitHub links, or the local campaign's issue file with what shows its dashboard."""
    if not job.part_of:
        return ""
    if _CONTROL_ISSUE.fullmatch(job.part_of):
        return f"Part of the campaign {job.part_of}"
    shown = f"stepwise campaign --issue {shlex.quote(job.part_of)}"
    return f"Part of the campaign {md.code(job.part_of)} ({md.code(shown)} shows its dashboard)"


def baseline_label(job: Job) -> str:
    if job.baseline_ok is None:
        return "not run"
    if not job.baseline:
        return "no validation commands configured"
    cause = None if job.baseline_ok else baseline_network_cause(job)
    verdict = "passes" if job.baseline_ok else f"FAILS — {cause.what}; {cause.fix}" \
        if cause is not None else "FAILS — batches cannot pass validation until it is fixed"
    reused = f"; baseline reused from {job.baseline_from} (same tree, commands and " \
        "environment), not run again" if job.baseline_from else ""
    return f"{verdict} ({'; '.join(command_line(c) for c in job.baseline)}){reused}"


def rate_limit_note(job: Job) -> str:
    """The line saying the job waits for GitHub (server mode): its rate limit, or a suspended
    installation (the job is parked); or ""."""
    until = job.server.rate_limited_until
    if job.server.parked and not job.is_terminal:
        return f"⏸️ Parked: {job.server.parked}."
    if until is None or job.is_terminal:
        return ""
    return (f"⏳ {RATE_LIMIT_WAIT} {until.astimezone(UTC):%H:%M} UTC; the job goes on by itself "
            "(nothing to do).")


def gate_prompt(job: Job, *, voice: Voice = LOCAL) -> str:
    """What happened at the open gate and the exact commands to continue, in `voice` (local
    mode's names the checkout and issue number, so each command works exactly as printed)."""
    gate = job.gate
    if gate is None:
        return ""
    paragraphs = [f"Waiting at gate `{gate.kind}` ({gate.id}): "
                  f"{md.message(voice.speak(gate.reason))}"]
    if gate.report is not None:
        report = gate.report
        paragraphs.append(f"Error `{report.code}` ({report.retry_class}): "
                          f"{md.message(voice.speak(report.message))}")
        if report.hint:
            paragraphs.append(f"Hint: {md.message(voice.speak(report.hint))}")
        tail = report.evidence.get("output_tail")
        shown_by_plan = gate.kind is Gate.PLAN and report.code == "baseline_failed"
        if isinstance(tail, str) and tail and not shown_by_plan:  # the plan prints it once
            paragraphs.append(f"Output tail:\n{md.block(tail.rstrip())}")
        paragraphs += artifact_lines(report.evidence)
    if evidence := gate_lines(job):  # the features' (evidence: coverage, edit shapes, forecast)
        paragraphs.append("\n".join(evidence))
    paragraphs += gate_choices(job, gate).lines(voice)
    return voice.speak("\n\n".join(paragraphs))


CARD_DETAIL_LIMIT = 40  # jobs with more batches list only the milestone in focus batch by batch
PLAN_BATCH_LINES = 60  # the plan lists this many batches, then sums up the rest


def _finished(batches: Sequence[Batch]) -> bool:
    return all(b.status in FINISHED for b in batches)


def _counts(batches: Sequence[Batch]) -> str:
    tally = Counter(b.status for b in batches)
    return ", ".join(f"{tally[status]} {status}" for status in batch_statuses() if tally[status])


def focus_milestone(job: Job) -> int | None:
    """The milestone a reader cares about now: the gate's, else the first unfinished one."""
    if job.gate is not None and job.gate.milestone is not None:
        return job.gate.milestone
    if job.gate is not None and job.gate.batch is not None:
        return job.batch(job.gate.batch).milestone
    for milestone in range(1, job.milestone_count + 1):
        if not _finished(job.milestone_batches(milestone)):
            return milestone
    return None


def render_card(job: Job, *, fold_finished: bool = True, voice: Voice = LOCAL,
                link: Callable[[str], str] | None = None, with_prompt: bool = True) -> str:
    """The progress card (the PR body): status, the open gate, milestones and batches.

    `with_prompt` false shows only which gate is open, not the commands that answer it.
    Small jobs list every unfinished milestone's batches (and finished ones too when
    `fold_finished` is false or the job is completed); larger jobs list only the milestone in
    focus and sum up runs of the others, so the card stays far below GitHub's 65,536 characters.
    """
    counted = tally(job)
    lines = [
        f"**Stepwise #{job.number}** — {md.text(job.title)}\n",
        f"Status: `{outcome(job, counted)}` · {counted.batches_line()} · "
        f"branch {md.code(job.branch)} at `{short(job.head_sha)}`",
        "",
        counted.files_line().capitalize(),
        *sandbox_lines(job),
        *([f"\n{line}"] if (line := part_of_line(job)) else []),
    ]
    position = job.server.queue_position
    if position:
        lines += ["", f"Waiting for another job of this repository to finish: position "
                      f"{position} in the queue."]
    if job.gate is not None and with_prompt:
        lines += ["", gate_prompt(job, voice=voice)]
    elif job.gate is not None:  # the prompt follows the card (the terminal prints it last)
        lines += ["", f"Waiting at gate `{job.gate.kind}` ({job.gate.id}): "
                      f"{md.message(job.gate.reason)}"]
    if job.gate is not None and (waiting := waiting_note(job)):  # its comment is not on GitHub
        lines += ["", waiting]
    if refused := refused_note(job):  # publications GitHub refused for good
        lines += ["", refused]
    if rate_limited := rate_limit_note(job):
        lines += ["", rate_limited]
    if job.error is not None:
        lines += ["", f"Error `{job.error.code}` ({job.error.retry_class}): "
                      f"{md.message(voice.speak(job.error.message))}"]
    lines += card_status_lines(job)  # the features' (CI: while the job waits for it)
    small = len(job.batches) <= CARD_DETAIL_LIMIT
    focus = focus_milestone(job)
    folded: list[int] = []

    def flush() -> None:
        if folded:
            batches = [b for m in folded for b in job.milestone_batches(m)]
            label = f"Milestone {folded[0]}" if len(folded) == 1 else \
                f"Milestones {folded[0]}–{folded[-1]}"
            lines.append(f"\n{label}: {_counts(batches)}\n")
            folded.clear()

    for milestone in range(1, job.milestone_count + 1):
        batches = job.milestone_batches(milestone)
        finished = _finished(batches)
        if small:
            show = not finished or not fold_finished or job.status is JobStatus.COMPLETED
        else:
            show = milestone == focus
        if not show and not small:
            folded.append(milestone)
            continue
        flush()
        counts = f"{sum(b.status is BatchStatus.COMPLETED for b in batches)}/{len(batches)}"
        lines.append(f"\nMilestone {milestone} ({counts} completed)\n")
        if show:
            lines.extend(f"- {status_mark(b.status)} {batch_line(b, link)}"
                         f"{card_batch_words(job, b)}"
                         for b in batches)
        lines += card_milestone_lines(job, milestone)
    flush()
    lines += card_closing_lines(job)  # the features' (bisect: split batches; base_moves: merges)
    return voice.speak("\n".join(lines))


def batch_line(batch: Batch, link: Callable[[str], str] | None = None) -> str:
    text = f"batch {batch.number}: {batch.status}"
    if batch.commit:
        text += f" [`{short(batch.commit)}`]({link(batch.commit)})" if link else \
            f" `{short(batch.commit)}`"
    if batch.reason:
        text += f" — {md.message(batch.reason)}"
    return f"{text} — {files_label(batch.files)}"
