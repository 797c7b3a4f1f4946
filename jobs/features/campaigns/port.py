"""What a mode provides to run a campaign (CampaignPort), and the loop that drives the record
through it: preview, start waves, read the repositories' jobs back, carry out steering."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from jobs.decisions.edit_shapes import ShapeSummary, job_shapes, summarize
from jobs.features.campaigns.dashboard import plain
from jobs.features.campaigns.record import (
    OPEN_STATES,
    Campaign,
    CampaignStatus,
    RepoEntry,
    RepoState,
)
from jobs.features.campaigns.rollout import mark_started, next_wave, settle
from jobs.features.campaigns.sample import cut_diff, dry_run_diff
from jobs.features.campaigns.selection import RepoFacts, left_out_reason
from jobs.features.campaigns.settings import CampaignSettings
from jobs.features.campaigns.shapes import entry_shapes
from jobs.features.campaigns.steering import JobAction, Steered
from jobs.inputs.recipes import rules_for
from jobs.inputs.spec import IssueTask
from jobs.kernel.job import Job
from jobs.kernel.model import GATES, JobStatus
from jobs.ports import Workspace


def preview_of(workspace: Workspace, sha: str, task: IssueTask, files: Sequence[str],
               targets: int, checks: Sequence[str]) -> Preview:
    """A repository's preview from its scope: the files, the validation commands, and for
    a recipe with an in-process `preview` (`replace`) a dry-run diff of its first file in scope."""
    diff = ""
    preview = rules_for(task.spec.recipe).preview
    if preview is not None and files and task.spec.find:
        text = workspace.show_file(sha, files[0])
        if text is not None:
            diff = dry_run_diff(files[0], text, edit=lambda before: preview(before, task.spec))
    return Preview(files=len(files), targets=targets, digest=plan_digest(files),
                   paths=tuple(files[:SAMPLE_FILES]), validate=tuple(checks),
                   sample=cut_diff(diff) if diff else "",
                   shapes=summarize(diff) if diff else None)


def plan_digest(files: Sequence[str]) -> str:
    """What a preview approved: a job whose planned files differ stops at its own plan gate."""
    return hashlib.sha256("\n".join(sorted(set(files))).encode()).hexdigest()[:16]


class LeftOut(Exception):
    """A repository the preview leaves out, with the reason in words."""


@dataclass(frozen=True)
class Preview:
    """A repository's scope as the campaign would plan it; nothing is changed to find it."""

    files: int
    targets: int
    digest: str  # of the files in scope: a job whose plan differs stops at its own plan gate
    paths: tuple[str, ...] = ()     # the files in scope, the first SAMPLE_FILES of them
    validate: tuple[str, ...] = ()  # the validation commands that will judge it
    sample: str = ""                # a dry-run diff of one file (deterministic `replace`)
    shapes: ShapeSummary | None = None  # that dry run's edit shapes


SAMPLE_FILES = 5  # files in scope a preview keeps by name; the dashboard folds beyond 3


@dataclass(frozen=True)
class JobView:
    """A repository's job as the campaign sees it."""

    state: RepoState
    job: str = ""
    gate: str = ""
    reason: str = ""
    batches_done: int = 0
    batches_total: int = 0
    files_done: int = 0
    link: str = ""
    ci: str = ""
    answers: tuple[str, ...] = ()  # the commands that answer its gate, as the mode says them
    pull: str = ""                 # its pull request's address
    where: str = ""                # where the answers are said (server: `owner/repo#N`)
    refused: str = ""              # the command was refused there: why (nothing changed)
    baseline: str = ""             # its validation on the base: "passes", "fails" ('' not run)
    shapes: ShapeSummary | None = None  # its committed batches' edit shapes (None: none yet)


def view_shapes(job: Job) -> ShapeSummary | None:
    """A job's committed edit shapes for its JobView (None before it commits any)."""
    found = job_shapes(job.batches)
    return found if found.hunks else None


def baseline_word(job: Job) -> str:
    return "" if job.baseline_ok is None else ("passes" if job.baseline_ok else "fails")


def gate_answers(job: Job) -> tuple[str, ...]:
    """The answers the job's open gate takes (its usual one first, with their arguments as
    `<placeholders>`), from the gate table; cancel is the campaign's own `skip`."""
    if job.gate is None:
        return ()
    rule = GATES[job.gate.kind]
    return (str(rule.verb), *(c for c in rule.other_choices if c != "cancel"))


# A start the mode's write budget put off (server: GitHub's 80 content-creating requests a
# minute and 500 an hour): the repository stays approved and starts in a later pass.
PACED = ("paced: GitHub allows 80 content-creating requests a minute and 500 an hour; the "
         "approved repositories start by themselves as the App's write budget has room")
PACED_ROW = "paced: starts when the write budget has room"
NOT_ADDED = ("{target}: not added. Stepwise adds a repository only when the App is installed "
             "there, you can read it, and everyone who can read this issue can read it too.")


class CampaignPort(Protocol):
    # The campaign's name for what `add` was given; None when it may not be added, for any
    # reason (absent, not installed, not readable): the answer reveals none of them.
    def resolve(self, target: str) -> str | None: ...
    def facts(self, name: str) -> RepoFacts: ...
    def preview(self, name: str) -> Preview: ...  # raises LeftOut
    def start(self, entry: RepoEntry) -> JobView: ...
    # `passes_gates`: the campaign is running, so a job's plan gate that matches the approved
    # preview may be passed in its name; otherwise the job is only read back.
    def read(self, entry: RepoEntry, *, passes_gates: bool) -> JobView: ...
    def act(self, entry: RepoEntry, action: JobAction) -> JobView: ...


def job_state(job: Job) -> RepoState:
    """What a repository's job means for the campaign: ended how, needing a human (a gate
    whose local exit code is 4, or interrupted), waiting for a decision, or working."""
    if job.status is JobStatus.COMPLETED:
        return RepoState.COMPLETED
    if job.status is JobStatus.CANCELLED:
        return RepoState.CANCELLED
    if job.status is JobStatus.FAILED:
        return RepoState.FAILED
    if job.status is JobStatus.INTERRUPTED or (job.gate is not None and job.gate.exit_code == 4):
        return RepoState.NEEDS_HUMAN
    return RepoState.WAITING if job.gate is not None else RepoState.WORKING


def passes_gates(campaign: Campaign) -> bool:
    """A campaign answers its repositories' gates only while it runs: not in its plan, paused,
    halted, cancelled or completed (a cancel refused in one repository leaves that job open,
    and reading it back must not approve its plan)."""
    return campaign.status is CampaignStatus.RUNNING


def record_view(entry: RepoEntry, view: JobView) -> None:
    """One repository event: O(1) on the record."""
    if entry.state is RepoState.SKIPPED:
        return  # skipped by a command: its job's own ending does not bring it back
    entry.state, entry.gate, entry.answer = view.state, view.gate, ""
    if view.state in (RepoState.NO_ACCESS, RepoState.APPROVED):
        entry.wave = None  # not started: someone with access approves it, or a later pass
    entry.reason = view.reason
    entry.batches_done, entry.batches_total = view.batches_done, view.batches_total
    entry.files_done = view.files_done
    entry.job, entry.link, entry.ci = view.job or entry.job, view.link or entry.link, view.ci
    entry.answers, entry.where = list(view.answers), view.where
    entry.pull = view.pull or entry.pull
    entry.baseline = view.baseline or entry.baseline
    if view.shapes is not None:
        entry.shapes = entry_shapes(view.shapes, entry.name)


def preview_entry(name: str, settings: CampaignSettings, port: CampaignPort) -> RepoEntry:
    reason = left_out_reason(settings, port.facts(name))
    if reason is not None:
        return RepoEntry(name=name, state=RepoState.LEFT_OUT, reason=reason)
    try:
        found = port.preview(name)
    except LeftOut as exc:
        return RepoEntry(name=name, state=RepoState.LEFT_OUT, reason=str(exc))
    return RepoEntry(name=name, state=RepoState.PREVIEWED, files=found.files,
                     targets=found.targets, preview_digest=found.digest,
                     paths=list(found.paths[:SAMPLE_FILES]), checks=list(found.validate),
                     sample=found.sample,
                     shapes=entry_shapes(found.shapes, name) if found.shapes else None)


def drive(campaign: Campaign, settings: CampaignSettings, port: CampaignPort,
          now: datetime) -> None:
    """Read every open repository back, then start waves while the rules allow (a mode whose
    jobs run to their next gate at once, like local mode, may start several waves here)."""
    passing = passes_gates(campaign)
    for entry in campaign.entries(*OPEN_STATES):
        record_view(entry, port.read(entry, passes_gates=passing))
    settle(campaign, settings, now)
    if not _start(campaign, settings, port, now, paced_names(campaign, settings), again=True):
        return  # still paced: no new wave before the last one has started whole
    while names := next_wave(campaign, settings):
        mark_started(campaign, names)
        campaign.log(now, f"wave {campaign.waves_started - 1} started: " + ", ".join(names[:20])
                     + (f" and {len(names) - 20} more" if len(names) > 20 else ""))
        if not _start(campaign, settings, port, now, names):
            break  # the rest waits for the write budget; the dashboard says so


def paced_names(campaign: Campaign, settings: CampaignSettings) -> list[str]:
    """The repositories of the last wave whose start the write budget put off, within the
    open-PR limit: they start before any new wave (they are that wave's)."""
    if campaign.status is not CampaignStatus.RUNNING:
        return []
    room = settings.max_open_prs - campaign.count(*OPEN_STATES)
    return [e.name for e in campaign.entries(RepoState.APPROVED) if e.reason == PACED_ROW][
        :max(room, 0)]


def _start(campaign: Campaign, settings: CampaignSettings, port: CampaignPort, now: datetime,
           names: list[str], *, again: bool = False) -> bool:
    """Start `names` until the mode's write budget says wait (the others stay approved, paced);
    False when it did."""
    paced = False
    for name in names:
        entry = campaign.repos[name]
        if again:
            entry.wave = max(campaign.waves_started - 1, 0)
        view = JobView(state=RepoState.APPROVED, reason=PACED_ROW) if paced else port.start(entry)
        record_view(entry, view)
        paced = paced or view.state is RepoState.APPROVED
    still = any(e.reason == PACED_ROW for e in campaign.entries(RepoState.APPROVED))
    if campaign.status is CampaignStatus.RUNNING and (still or campaign.status_reason == PACED):
        campaign.status_reason = PACED if still else ""
    settle(campaign, settings, now)
    return not paced


def carry_out(campaign: Campaign, settings: CampaignSettings, steered: Steered,
              port: CampaignPort, now: datetime) -> list[str]:
    """Do to the repositories' jobs what a command asked; what each said, in order."""
    said: list[str] = []
    for name, action in steered.actions:
        if action is JobAction.PREVIEW:
            resolved = port.resolve(name)
            if resolved is None:
                said.append(NOT_ADDED.format(target=plain(name)))
                continue
            name = resolved
            if name in campaign.repos:
                said.append(f"{name} is already in the campaign.")
                continue
            entry = preview_entry(name, settings, port)
            campaign.repos[entry.name] = entry
            said.append(f"{entry.name}: " + (f"left out ({entry.reason})"
                                            if entry.state is RepoState.LEFT_OUT else
                                            f"{entry.files} files in scope; approve it to start"))
            continue
        entry = campaign.repos[name]
        view = port.act(entry, action)
        if view.refused:  # refused in that repository: the record keeps what it had
            said.append(f"{name}: `{action}` refused: {view.refused}")
            continue
        if action is JobAction.SKIP:
            entry.state, entry.reason = RepoState.SKIPPED, steered.reason
            campaign.log(now, f"skip {entry.name}: {steered.reason}")
            said.append(f"{name}: skipped")
            continue
        if entry.state is not RepoState.SKIPPED:
            record_view(entry, view)
        said.append(f"{name}: {action} → {view.state}" + (f" ({view.reason})" if view.reason
                                                           else ""))
    campaign.log(now, f"carried out {len(steered.actions)} action(s)")
    return said


def apply_spec_change(campaign: Campaign, digest: str, settings: CampaignSettings,
                      port: CampaignPort, now: datetime) -> str:
    """A new spec: before approval the preview is redone; after it, the repositories not
    started are previewed again and the campaign pauses until `resume`, which re-plans the
    started ones' files not done."""
    campaign.spec_digest = digest
    if campaign.status is CampaignStatus.PLAN:
        for name in list(campaign.repos):
            campaign.repos[name] = preview_entry(name, settings, port)
        campaign.log(now, "the spec changed: the preview was redone")
        return "The spec changed; the preview was redone."
    for entry in campaign.entries(RepoState.PREVIEWED, RepoState.APPROVED):
        fresh = preview_entry(entry.name, settings, port)
        entry.files, entry.targets = fresh.files, fresh.targets
        entry.preview_digest = fresh.preview_digest
        entry.paths, entry.checks, entry.sample = fresh.paths, fresh.checks, fresh.sample
        entry.shapes = fresh.shapes
        if fresh.state is RepoState.LEFT_OUT:
            entry.state, entry.reason = RepoState.LEFT_OUT, fresh.reason
    campaign.replan = [entry.name for entry in campaign.entries(*OPEN_STATES)]
    if campaign.status not in (CampaignStatus.COMPLETED, CampaignStatus.CANCELLED):
        campaign.status = CampaignStatus.PAUSED
        campaign.status_reason = "the spec changed; `resume` applies it to repositories not done"
    campaign.log(now, "the spec changed: paused until resume")
    return "The spec changed; the campaign is paused until `resume` applies it."
