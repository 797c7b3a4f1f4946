"""The commands that steer a campaign (`/stepwise campaign <verb>` on its issue, `stepwise
campaign --command` locally) and what each does to the record; what must then happen to the
repositories' own jobs is returned as actions for the mode to carry out."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from datetime import datetime
from difflib import get_close_matches
from enum import StrEnum

from jobs.basics.errors import BadInputError
from jobs.basics.voice import is_placeholder
from jobs.features.campaigns.record import (
    OPEN_STATES,
    TROUBLED_STATES,
    Campaign,
    CampaignStatus,
    RepoEntry,
    RepoState,
)

USAGE = ("campaign commands: approve <repo>|all, retry-failed, skip <repo> <reason>, pause, "
         "resume, cancel, add <repo>")
# Gates `approve all` passes in bulk: decisions a campaign's approval already made.
BULK_GATES = frozenset({"plan", "milestone"})


class CampaignVerb(StrEnum):
    APPROVE = "approve"
    RETRY_FAILED = "retry-failed"
    SKIP = "skip"
    PAUSE = "pause"
    RESUME = "resume"
    CANCEL = "cancel"
    ADD = "add"


class JobAction(StrEnum):
    APPROVE = "approve"
    RETRY = "retry"
    CANCEL = "cancel"
    PREVIEW = "preview"  # `add`: the mode previews the repository, then it waits for approval
    REPLAN = "replan"    # `resume` after a spec change: the job re-plans its files not done
    SKIP = "skip"        # `skip`: its job (if open) is cancelled, then it is marked skipped,
                         # only when whoever said it may steer in that repository


@dataclass(frozen=True)
class CampaignCommand:
    verb: CampaignVerb
    target: str = ""
    reason: str = ""


@dataclass(frozen=True)
class Steered:
    """What a command said, and what the mode must do to repositories' jobs."""

    message: str
    actions: tuple[tuple[str, JobAction], ...] = ()
    reason: str = ""  # `skip`'s reason, recorded once the repository accepted it


def parse_command(text: str) -> CampaignCommand:
    """`approve all`, `skip acme/api too old`, ... (the words after `/stepwise campaign`)."""
    words = text.strip().split(maxsplit=2)
    if not words:
        raise BadInputError("an empty campaign command", hint=USAGE, code="bad_command")
    try:
        verb = CampaignVerb(words[0].lower())
    except ValueError:
        names = [v.value for v in CampaignVerb]
        close = [n for n in names if n.startswith(words[0].lower())] or get_close_matches(
            words[0].lower(), names, n=1)
        raise BadInputError(f"unknown campaign command {words[0]!r}"
                            + (f" (did you mean `{close[0]}`?)" if close else ""),
                            hint=USAGE, code="bad_command") from None
    rest = words[1:]
    needs_target = verb in (CampaignVerb.APPROVE, CampaignVerb.SKIP, CampaignVerb.ADD)
    if needs_target and not rest:
        raise BadInputError(f"`{verb}` needs a repository", hint=USAGE, code="bad_command")
    if not needs_target and rest:
        raise BadInputError(f"`{verb}` takes no argument", hint=USAGE, code="bad_command")
    reason = rest[1].strip() if len(rest) > 1 else ""
    if verb is CampaignVerb.SKIP and (not reason or is_placeholder(reason, "reason")):
        raise BadInputError("`skip` needs a reason after the repository" + (
            f", not its placeholder `{reason}`" if reason else ""),
            hint="e.g. `skip acme/api archived next month`", code="bad_command")
    if verb is not CampaignVerb.SKIP and reason:
        raise BadInputError(f"`{verb}` takes one repository", hint=USAGE, code="bad_command")
    return CampaignCommand(verb, rest[0] if rest else "", reason)


def find_entry(campaign: Campaign, name: str) -> RepoEntry:
    """The entry called `name` (case-insensitive; a path's last part also matches locally)."""
    wanted = name.strip().rstrip("/").lower()
    for entry in campaign.entries():
        if entry.name.lower() == wanted or entry.name.lower() == wanted.rsplit("/", 1)[-1]:
            return entry
    close = get_close_matches(wanted, [e.name.lower() for e in campaign.entries()], n=1)
    raise BadInputError(f"{name!r} is not a repository of this campaign"
                        + (f" (did you mean `{close[0]}`?)" if close else ""),
                        hint="the dashboard lists them; `add <repo>` adds one",
                        code="unknown_repository")


def _approve(campaign: Campaign, target: str, now: datetime) -> Steered:
    if campaign.status in (CampaignStatus.CANCELLED, CampaignStatus.COMPLETED):
        return Steered(f"The campaign is {campaign.status}; nothing to approve.")
    chosen = campaign.entries() if target.lower() == "all" else [find_entry(campaign, target)]
    approved = [e for e in chosen if e.state in (RepoState.PREVIEWED, RepoState.NO_ACCESS)]
    for entry in approved:
        entry.state = RepoState.APPROVED
    actions = tuple((e.name, JobAction.APPROVE) for e in chosen if e.state in OPEN_STATES and (
        target.lower() != "all" or (e.state is RepoState.WAITING and e.gate in BULK_GATES)))
    started = campaign.status is CampaignStatus.PLAN and bool(approved)
    if started:
        campaign.status = CampaignStatus.RUNNING
    if not approved and not actions:
        return Steered(f"Nothing to approve for {target}: no repository waits for approval "
                       "or at a plan or milestone gate.")
    campaign.log(now, f"approve {target}: {len(approved)} approved, {len(actions)} gates passed")
    parts = [f"{len(approved)} repositor{'y' if len(approved) == 1 else 'ies'} approved"
             + ("; the campaign starts with its canaries" if started else "")] if approved else []
    if actions:
        parts.append(f"{len(actions)} repository gate(s) passed")
    return Steered("; ".join(parts) + ".", actions)


def apply(campaign: Campaign, command: CampaignCommand, now: datetime, *,
          by: str = "") -> Steered:
    """Change the record as `command` says; the returned actions are for the repositories' jobs.
    `by`: the login of who said it (the App's), named in the record's reason and history."""
    who = f"by @{by}" if by else "by a command"
    verb, ended = command.verb, campaign.status in (CampaignStatus.CANCELLED,
                                                    CampaignStatus.COMPLETED)
    if ended and verb is not CampaignVerb.APPROVE:
        return Steered(f"The campaign is {campaign.status}; `{verb}` changes nothing.")
    if verb is CampaignVerb.APPROVE:
        return _approve(campaign, command.target, now)
    if verb is CampaignVerb.RETRY_FAILED:
        troubled = campaign.entries(*TROUBLED_STATES)
        retry = [e for e in troubled if e.state is RepoState.NEEDS_HUMAN]
        for entry in retry:
            entry.acknowledged = False
        campaign.log(now, f"retry-failed: {len(retry)} repositories")
        return Steered(f"Retrying {len(retry)} repositor{'y' if len(retry) == 1 else 'ies'}"
                       " that needed a human.", tuple((e.name, JobAction.RETRY) for e in retry))
    if verb is CampaignVerb.SKIP:
        entry = find_entry(campaign, command.target)
        if entry.state in (RepoState.SKIPPED, RepoState.LEFT_OUT):
            return Steered(f"{entry.name} is {entry.state.replace('_', ' ')} already.")
        return Steered(f"Skipping {entry.name}.", ((entry.name, JobAction.SKIP),),
                       reason=command.reason)
    if verb is CampaignVerb.PAUSE:
        if campaign.status is not CampaignStatus.RUNNING:
            return Steered(f"The campaign is {campaign.status}, not running; nothing to pause.")
        campaign.status, campaign.status_reason = CampaignStatus.PAUSED, f"paused {who}"
        campaign.log(now, f"paused {who}")
        return Steered("Paused: no repository starts until `resume`; jobs already started "
                       "go on to their next gate.")
    if verb is CampaignVerb.RESUME:
        return _resume(campaign, now)
    if verb is CampaignVerb.CANCEL:
        opened = [e for e in campaign.entries(*OPEN_STATES)]
        for entry in campaign.entries(RepoState.PREVIEWED, RepoState.APPROVED):
            entry.state = RepoState.CANCELLED
        campaign.status, campaign.status_reason = CampaignStatus.CANCELLED, f"cancelled {who}"
        campaign.log(now, f"cancelled {who}")
        return Steered(f"Cancelled; {len(opened)} running job(s) are cancelled too.",
                       tuple((e.name, JobAction.CANCEL) for e in opened))
    if any(e.name.lower() == command.target.lower() for e in campaign.entries()):
        return Steered(f"{command.target} is already in the campaign.")
    return Steered(f"Previewing {command.target}.", ((command.target, JobAction.PREVIEW),))


def _resume(campaign: Campaign, now: datetime) -> Steered:
    if campaign.status not in (CampaignStatus.PAUSED, CampaignStatus.HALTED):
        return Steered(f"The campaign is {campaign.status}; nothing to resume.")
    for entry in campaign.entries(*TROUBLED_STATES):
        entry.acknowledged = True  # known to the person who resumed: the halt rule counts anew
    replan = tuple((name, JobAction.REPLAN) for name in campaign.replan
                   if name in campaign.repos and campaign.repos[name].state in OPEN_STATES)
    campaign.replan = []
    campaign.status, campaign.status_reason = CampaignStatus.RUNNING, ""
    campaign.log(now, "resumed" + (f"; {len(replan)} job(s) re-plan" if replan else ""))
    return Steered("Resumed: the next wave starts; repositories that needed a human are not "
                   "counted again by the halt rule"
                   + (f"; {len(replan)} started job(s) re-plan their files not done." if replan
                      else "."), replan)


def quote_command(text: str) -> str:
    """A command line argument shown so it can be pasted back."""
    return shlex.quote(text) if re.search(r"[^\w@%+=:,./-]", text) else text
