"""Closing a campaign issue through the App: someone who may not steer closes it and the
campaign goes on (with a reply saying so); a maintainer closes it and the campaign is
cancelled like `/stepwise campaign cancel` (the running canary's job is cancelled, repositories
not started never start), the dashboard naming who closed it; reopening restarts nothing and
says how to run it again."""

from __future__ import annotations

from pathlib import Path

import httpx

from bot.plumbing import campaign_store
from bot.server.campaigns.tasks import tick_all
from jobs.features.campaigns.record import CampaignStatus, RepoState
from tests.bot.conftest import OWNER, REPO, SECRET, World, open_world
from tests.bot.test_app_campaigns import CAMPAIGN, add_service, dashboard
from tests.kit.webhooks import deliver, make_event


def reopen(world: World, number: int, sender: str) -> None:
    payload = make_event("issues.closed", repo=REPO, issue_number=number, sender=sender)
    payload["action"], payload["issue"]["state"] = "reopened", "open"
    payload["issue"]["closed_at"] = payload["issue"]["state_reason"] = None
    with httpx.Client(base_url=world.url, trust_env=False) as client:
        assert deliver(client, "issues", payload, secret=SECRET).status_code == 202


def test_closing_the_campaign_issue_cancels_it_and_reopening_restarts_nothing(
        tmp_path: Path, redis_url: str) -> None:
    with open_world(tmp_path, redis_url) as world:
        for name in ("svc-a", "svc-b", "svc-c"):
            add_service(world, name)
        world.gh.add_issue(REPO, "Move every service to new()",
                           CAMPAIGN.replace("canary: 2", "canary: 1"), user="maria")
        world.send("issues.labeled", issue_number=2, label="stepwise-campaign", sender="maria")
        world.work()
        world.comment("/stepwise campaign approve all", by="maria", on=2)
        world.work()  # the canary's job runs to its plan gate; no tick has passed it yet
        doc = campaign_store.find(world.redis, REPO, 2)
        assert doc is not None and doc.campaign.repos[f"{OWNER}/svc-a"].state is \
            RepoState.WORKING
        canary = world.ctx.store.find(f"{OWNER}/svc-a", 1)
        assert canary is not None and not canary.is_terminal

        # Someone with read access closes it: nothing stops, and a reply says why.
        world.send("issues.closed", issue_number=2, sender="rita")
        world.work()
        assert any("@rita closed this issue, but the campaign goes on" in b
                   for b in world.bodies(2))
        assert campaign_store.find(world.redis, REPO, 2).campaign.status is CampaignStatus.RUNNING

        # A maintainer closes it: cancelled, in their name, the canary's job too.
        world.send("issues.closed", issue_number=2, sender="maria")
        world.work()
        doc = campaign_store.find(world.redis, REPO, 2)
        assert doc is not None and doc.campaign.status is CampaignStatus.CANCELLED
        assert doc.closed_by == "maria"
        states = {name: entry.state for name, entry in doc.campaign.repos.items()}
        assert states == {f"{OWNER}/svc-a": RepoState.CANCELLED,
                          f"{OWNER}/svc-b": RepoState.CANCELLED,
                          f"{OWNER}/svc-c": RepoState.CANCELLED}
        assert world.ctx.store.find(f"{OWNER}/svc-a", 1).status.value == "cancelled"
        assert "Status: **cancelled**: @\u200bmaria closed the campaign issue" in dashboard(world)
        assert any("Closing this issue cancelled the campaign (@maria)" in b
                   for b in world.bodies(2))

        # Reopening restarts nothing; the reply says how to run it again.
        reopen(world, 2, "maria")
        world.work()
        tick_all(world.ctx)
        world.work()
        assert any("reopening the issue does not restart it" in b and
                   "remove the `stepwise-campaign` label and add it again" in b
                   for b in world.bodies(2))
        assert campaign_store.find(world.redis, REPO, 2).campaign.status is \
            CampaignStatus.CANCELLED
        for name in ("svc-b", "svc-c"):  # never started: no tracking issue, no job
            assert not world.gh.repos[f"{OWNER}/{name}"].issues
            assert world.ctx.store.find(f"{OWNER}/{name}", 1) is None


def test_a_replayed_close_of_an_open_campaign_issue_cancels_nothing(
        tmp_path: Path, redis_url: str) -> None:
    """A captured `issues.closed` body sent while the campaign issue is open on GitHub: GitHub
    does not confirm the close, so the campaign goes on (issue 40, replayed webhooks)."""
    import json

    with open_world(tmp_path, redis_url) as world:
        add_service(world, "svc-a")
        world.gh.add_issue(REPO, "Move every service to new()", CAMPAIGN, user="maria")
        world.send("issues.labeled", issue_number=2, label="stepwise-campaign", sender="maria")
        world.work()
        payload = make_event("issues.closed", repo=REPO, issue_number=2, sender="maria")
        assert world.post("issues", json.dumps(payload).encode()).json()["status"] == "queued"
        world.work()
        doc = campaign_store.find(world.redis, REPO, 2)
        assert doc is not None and doc.campaign.status is not CampaignStatus.CANCELLED
        assert world.gh.repo(REPO).issues[2].state == "open"
        assert not any("closed the campaign" in body for body in world.bodies(2))
