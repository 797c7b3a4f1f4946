"""The pure rules behind who may pass a repository's gate: `drive` lets the port pass plan
gates only while the campaign runs (never in its plan, paused, halted, cancelled or completed),
and `cancel`/`pause` name who said them in the record's reason and history."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from jobs.features.campaigns.port import JobView, Preview, drive, passes_gates
from jobs.features.campaigns.record import Campaign, CampaignStatus, RepoEntry, RepoState
from jobs.features.campaigns.selection import RepoFacts
from jobs.features.campaigns.settings import CampaignSettings
from jobs.features.campaigns.steering import CampaignCommand, CampaignVerb, JobAction, apply

NOW = datetime(2026, 12, 2, tzinfo=UTC)


class RecordingPort:
    """Reads every job back as waiting at its plan gate, and notes what it was allowed."""

    def __init__(self) -> None:
        self.reads: list[tuple[str, bool]] = []

    def resolve(self, target: str) -> str:
        return target

    def facts(self, name: str) -> RepoFacts:
        return RepoFacts(name=name)

    def preview(self, name: str) -> Preview:
        return Preview(files=1, targets=1, digest="d")

    def start(self, entry: RepoEntry) -> JobView:
        return JobView(state=RepoState.WORKING)

    def read(self, entry: RepoEntry, *, passes_gates: bool) -> JobView:
        self.reads.append((entry.name, passes_gates))
        return JobView(state=RepoState.WAITING, gate="plan")

    def act(self, entry: RepoEntry, action: JobAction) -> JobView:
        return JobView(state=entry.state)


def running_campaign(status: CampaignStatus) -> Campaign:
    found = Campaign(id="c1", title="Bump", spec_digest="d", created_at=NOW, updated_at=NOW,
                     status=status)
    found.repos["acme/a"] = RepoEntry(name="acme/a", state=RepoState.WAITING, wave=0, gate="plan")
    return found


@pytest.mark.parametrize("status", list(CampaignStatus))
def test_drive_lets_the_port_pass_gates_only_while_the_campaign_runs(
        status: CampaignStatus) -> None:
    found, port = running_campaign(status), RecordingPort()
    drive(found, CampaignSettings(), port, NOW)
    running = status is CampaignStatus.RUNNING
    assert passes_gates(found) is running
    assert port.reads == [("acme/a", running)]  # read back either way, approved only running


@pytest.mark.parametrize(("verb", "status", "reason"), [
    (CampaignVerb.CANCEL, CampaignStatus.CANCELLED, "cancelled by @maria"),
    (CampaignVerb.PAUSE, CampaignStatus.PAUSED, "paused by @maria"),
])
def test_cancel_and_pause_name_who_said_them(verb: CampaignVerb, status: CampaignStatus,
                                             reason: str) -> None:
    found = running_campaign(CampaignStatus.RUNNING)
    apply(found, CampaignCommand(verb), NOW, by="maria")
    assert found.status is status and found.status_reason == reason
    assert found.history[-1].endswith(reason)
    unnamed = running_campaign(CampaignStatus.RUNNING)  # local mode: no login to name
    apply(unnamed, CampaignCommand(verb), NOW)
    assert unnamed.status_reason == reason.replace("@maria", "a command")
