"""Rollout decisions on a campaign record: which repositories start next (canaries first, then
waves, within the open-PR limit), when the campaign halts, and when it is complete. They read
the record's running counters and per-state index, never every entry: a repository event costs
the same at 50 repositories as at 1,000."""

from __future__ import annotations

from datetime import datetime

from jobs.features.campaigns.record import (
    ENDED_STATES,
    OPEN_STATES,
    TROUBLED_STATES,
    Campaign,
    CampaignStatus,
    RepoState,
)
from jobs.features.campaigns.settings import CampaignSettings


def wave_size(campaign: Campaign, settings: CampaignSettings) -> int:
    """The canaries are wave 0 (when `canary` is not 0); every later wave is `wave` big."""
    return settings.canary if campaign.waves_started == 0 and settings.canary else settings.wave


def next_wave(campaign: Campaign, settings: CampaignSettings) -> list[str]:
    """The repositories to start now: none while the last wave still works, while the campaign
    is not running, or when the open-PR limit is reached."""
    if campaign.status is not CampaignStatus.RUNNING:
        return []
    if campaign.count(RepoState.WORKING):
        return []  # the last wave has not settled: its outcome decides whether to go on
    room = min(wave_size(campaign, settings), settings.max_open_prs - campaign.count(*OPEN_STATES))
    if room <= 0 or not campaign.count(RepoState.APPROVED):
        return []
    return [entry.name for entry in campaign.entries(RepoState.APPROVED)[:room]]


def mark_started(campaign: Campaign, names: list[str]) -> None:
    for name in names:
        entry = campaign.repos[name]
        entry.wave, entry.state = campaign.waves_started, RepoState.WORKING
    if names:
        campaign.waves_started += 1


def halt_reason(campaign: Campaign, settings: CampaignSettings) -> str | None:
    """Why the campaign must halt: more than `halt_when_failing` of the started repositories
    need a human (those acknowledged by a `resume` are not counted again)."""
    started, troubled = campaign.tally["started"], campaign.tally["troubled"]
    if not started or troubled / started <= settings.halt_when_failing:
        return None
    # Only when it halts: the first few by name, from the index of those needing a human.
    names = [e.name for e in campaign.entries(*TROUBLED_STATES)
             if e.wave is not None and not e.acknowledged][:5]
    return (f"{troubled} of {started} started repositories need a human "
            f"({troubled / started:.0%}, more than `halt_when_failing` "
            f"{settings.halt_when_failing:.0%}): {', '.join(names)}"
            + (" …" if troubled > len(names) else ""))


def settle(campaign: Campaign, settings: CampaignSettings, now: datetime) -> None:
    """After entries changed: halt when failures pile up, complete when every repository ended."""
    if campaign.status in (CampaignStatus.RUNNING, CampaignStatus.PAUSED):
        reason = halt_reason(campaign, settings)
        if reason is not None:
            campaign.status, campaign.status_reason = CampaignStatus.HALTED, reason
            campaign.log(now, f"halted: {reason}")
            return
    if campaign.status is CampaignStatus.RUNNING and \
            campaign.count(*ENDED_STATES) == len(campaign.repos):
        campaign.status, campaign.status_reason = CampaignStatus.COMPLETED, ""
        campaign.log(now, "completed: every repository's job ended")
