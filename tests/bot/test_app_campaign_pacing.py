"""Hundreds of repositories within GitHub's limits (issue 46, item 5), through signed webhooks
into the app against the fake GitHub: when the App's write budget (GitHub's content-creation
limit, bot/github/write_budget.py) has no room, the repositories left of a wave stay approved,
marked paced, and the dashboard says why; none fails, and a later pass starts them. The world's
clock, which the budget keeps, is moved forward where the budget would refill, instead of the
test sleeping through minutes of it."""

from __future__ import annotations

from pathlib import Path

from bot.plumbing import campaign_store
from bot.server.campaigns.tasks import tick_all
from jobs.features.campaigns.port import PACED, PACED_ROW
from jobs.features.campaigns.record import RepoState
from tests.bot.conftest import OWNER, REPO, open_world
from tests.bot.test_app_campaigns import CAMPAIGN, add_service, dashboard
from tests.kit.waiting import ShiftedClock


def test_a_spent_write_budget_paces_the_wave_instead_of_failing_it(tmp_path: Path,
                                                                   redis_url: str) -> None:
    # A budget of 3 writes at once, then one every 20 s: the wave of 5 cannot all start now.
    with open_world(tmp_path, redis_url, github_writes_per_minute=6,
                    github_write_burst=3) as world:
        clock = world.ctx.clock  # the write budget's too (tests/bot/conftest.py open_world)
        assert isinstance(clock, ShiftedClock)
        for index in range(5):
            add_service(world, f"svc-{index}")
        body = CAMPAIGN.replace("canary: 2", "canary: 0").replace("wave: 2", "wave: 5")
        world.gh.add_issue(REPO, "Move every service to new()", body, user="maria")
        world.send("issues.labeled", issue_number=2, label="stepwise-campaign", sender="maria")
        world.work()
        clock.advance(20)  # the label's writes (its dashboard) are behind us: a fresh burst
        world.comment("/stepwise campaign approve all", by="maria", on=2)
        world.work(max_jobs=1)  # the command only: no repository's job runs yet
        doc = campaign_store.find(world.redis, REPO, 2)
        assert doc is not None
        states = [entry.state for entry in doc.campaign.entries()]
        started = [e for e in doc.campaign.entries() if e.state is RepoState.WORKING]
        paced = doc.campaign.entries(RepoState.APPROVED)
        assert 1 <= len(started) < 5 and len(started) + len(paced) == 5, states
        assert RepoState.FAILED not in states
        assert all(entry.reason == PACED_ROW and entry.wave is None for entry in paced)
        assert doc.campaign.status_reason == PACED
        created = [e for e in world.gh.effects if e.endswith(":issue-created")]
        assert len(created) == len(started)  # nothing was half-opened in a paced repository
        # Later passes start the rest as the budget refills.
        for _ in range(15):  # 150 s of the budget's time
            clock.advance(10)
            tick_all(world.ctx)
            doc = campaign_store.find(world.redis, REPO, 2)
            assert doc is not None
            if not doc.campaign.entries(RepoState.APPROVED):
                break
        assert doc.campaign.entries(RepoState.APPROVED) == [], dashboard(world)
        assert len({e for e in world.gh.effects if e.endswith(":issue-created")}) == 5
        assert all(f"{OWNER}/svc-{i}" in doc.campaign.repos for i in range(5))
