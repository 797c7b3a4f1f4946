"""The task center's campaign pages: the list, one campaign with every repository (no folding),
untrusted text escaped, a missing campaign answered 404, and both behind the login."""

from __future__ import annotations

from datetime import UTC, datetime

import redis
from fastapi.testclient import TestClient

from bot.plumbing import campaign_store
from bot.plumbing.campaign_store import CampaignDoc
from jobs.features.campaigns.record import Campaign, CampaignStatus, RepoEntry, RepoState
from jobs.features.campaigns.settings import CampaignSettings

NOW = datetime(2026, 12, 1, tzinfo=UTC)


def seed_campaign(connection: redis.Redis, repos: int = 120) -> None:
    campaign = Campaign(id="c1", title="Move to new()", spec_digest="d", created_at=NOW,
                        updated_at=NOW, status=CampaignStatus.HALTED,
                        status_reason="1 of 2 started repositories need a human")
    for index in range(repos):
        name = f"acme/svc-{index:03d}"
        campaign.repos[name] = RepoEntry(name=name, state=RepoState.COMPLETED, files=2, wave=1,
                                         link=f"https://github.com/{name}/pull/1")
    campaign.repos["acme/bad"] = RepoEntry(
        name="acme/bad", state=RepoState.NEEDS_HUMAN, wave=0, gate="failure",
        reason="<script>alert(1)</script> broke", answer="/stepwise status on acme/bad#1")
    campaign.log(NOW, "halted")
    campaign_store.save(connection, CampaignDoc(
        campaign=campaign, settings=CampaignSettings(), control="acme/control", number=7,
        installation_id=1, title="Move to new()", task_body="", issue_text=""))


def test_campaign_pages_list_and_show_every_repository(logged_in: TestClient,
                                                        connection: redis.Redis) -> None:
    seed_campaign(connection)
    listing = logged_in.get("/campaigns")
    assert listing.status_code == 200
    assert 'href="/campaigns/acme/control/7"' in listing.text and "halted" in listing.text
    page = logged_in.get("/campaigns/acme/control/7")
    assert page.status_code == 200
    assert page.text.count(">acme/svc-") == 120  # every repository, none folded away
    assert "Needs a human (1)" in page.text and "canary" in page.text
    assert "<script>" not in page.text and "&lt;script&gt;" in page.text
    assert logged_in.get("/campaigns/acme/control/8").status_code == 404


def test_campaign_pages_need_the_login(client: TestClient, connection: redis.Redis) -> None:
    seed_campaign(connection, repos=1)
    for path in ("/campaigns", "/campaigns/acme/control/7"):
        response = client.get(path)
        assert response.status_code == 303 and "/login" in response.headers["location"]
