"""A campaign passes its repositories' plan gates only while it runs, through the App: after
`/stepwise campaign cancel` (refused in one repository, whose job stays open) no later command or
reconciler tick approves that job's plan, and while it is paused none does until `resume`. Who
cancelled or paused is named in the record and on the dashboard."""

from __future__ import annotations

from pathlib import Path

from bot.plumbing import campaign_store
from bot.server.campaigns.tasks import tick_all
from jobs.features.campaigns.record import CampaignStatus, RepoState
from jobs.kernel.model import Gate
from tests.bot.conftest import OWNER, REPO, World, open_world
from tests.bot.test_app_campaigns import CAMPAIGN, add_service, dashboard, settle

SVC_A = f"{OWNER}/svc-a"


def start_canary(world: World) -> None:
    """svc-a (the one canary) and svc-b; maria approves, and the canary's job runs to its plan
    gate, which no tick has passed yet."""
    for name in ("svc-a", "svc-b"):
        add_service(world, name)
    world.gh.add_issue(REPO, "Move every service to new()",
                       CAMPAIGN.replace("canary: 2", "canary: 1"), user="maria")
    world.send("issues.labeled", issue_number=2, label="stepwise-campaign", sender="maria")
    world.work()
    world.comment("/stepwise campaign approve all", by="maria", on=2)
    world.work()
    assert_plan_gate_open(world)


def assert_plan_gate_open(world: World) -> None:
    job = world.ctx.store.find(SVC_A, 1)
    assert job is not None and not job.is_terminal
    assert job.gate is not None and job.gate.kind is Gate.PLAN and not job.gate.while_planning
    assert job.approved_digest is None  # nobody approved its plan
    assert not any("approved" in event.message.lower() for event in job.events), \
        [event.message for event in job.events]


def test_a_cancelled_campaign_never_passes_a_plan_gate_its_cancel_could_not_close(
        tmp_path: Path, redis_url: str) -> None:
    with open_world(tmp_path, redis_url) as world:
        start_canary(world)
        # bob may steer the campaign, but only read svc-a: its job's cancel is refused there.
        world.gh.set_permission(REPO, "bob", "maintain")
        world.gh.set_permission(SVC_A, "bob", "read")
        world.comment("/stepwise campaign cancel", by="bob", on=2)
        world.work()
        assert any("@bob may not steer in octo-org/svc-a" in b for b in world.bodies(2)), world.bodies(2)
        doc = campaign_store.find(world.redis, REPO, 2)
        assert doc is not None and doc.campaign.status is CampaignStatus.CANCELLED
        assert doc.campaign.status_reason == "cancelled by @bob"
        assert any(line.endswith("cancelled by @bob") for line in doc.campaign.history)
        assert "Status: **cancelled**: cancelled by @\u200bbob" in dashboard(world)
        assert doc.campaign.repos[SVC_A].state is RepoState.WAITING  # still open: it says why
        assert "may not steer in octo-org/svc-a" in doc.campaign.repos[SVC_A].reason
        assert "@\u200bbob may not steer in octo-org/svc-a" in dashboard(world)
        assert_plan_gate_open(world)

        # maria (who may approve in svc-a) says `approve all`; the reconciler ticks: the
        # campaign reads nothing back that approves svc-a's plan in anyone's name.
        world.comment("/stepwise campaign approve all", by="maria", on=2)
        world.work()
        assert any("The campaign is cancelled; nothing to approve" in b for b in world.bodies(2))
        for _ in range(3):
            tick_all(world.ctx)
            world.work()
        assert_plan_gate_open(world)
        doc = campaign_store.find(world.redis, REPO, 2)
        assert doc is not None and doc.campaign.status is CampaignStatus.CANCELLED
        assert not doc.campaign.repos[SVC_A].plan_passed
        assert doc.campaign.repos[f"{OWNER}/svc-b"].state is RepoState.CANCELLED
        assert world.ctx.store.find(f"{OWNER}/svc-b", 1) is None  # never started


def test_a_paused_campaign_passes_no_plan_gate_until_resume(tmp_path: Path,
                                                             redis_url: str) -> None:
    with open_world(tmp_path, redis_url) as world:
        start_canary(world)
        world.comment("/stepwise campaign pause", by="maria", on=2)
        world.work()
        settle(world)  # reconciler passes while paused
        tick_all(world.ctx)
        world.work()
        doc = campaign_store.find(world.redis, REPO, 2)
        assert doc is not None and doc.campaign.status is CampaignStatus.PAUSED
        assert doc.campaign.status_reason == "paused by @maria"
        assert any(line.endswith("paused by @maria") for line in doc.campaign.history)
        assert "Status: **paused**: paused by @\u200bmaria" in dashboard(world)
        entry = doc.campaign.repos[SVC_A]
        assert entry.state is RepoState.WAITING and entry.gate == "plan"
        assert not entry.plan_passed
        assert_plan_gate_open(world)

        world.comment("/stepwise campaign resume", by="maria", on=2)
        settle(world)
        doc = campaign_store.find(world.redis, REPO, 2)
        assert doc is not None and doc.campaign.status is CampaignStatus.COMPLETED, \
            dashboard(world)
        assert doc.campaign.repos[SVC_A].plan_passed
        assert doc.campaign.repos[SVC_A].state is RepoState.COMPLETED
        job = world.ctx.store.find(SVC_A, 1)
        assert job is not None and job.approved_digest is not None
