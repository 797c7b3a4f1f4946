"""Through the App, a campaign's dashboard sums the edit shapes of all its repositories so one
review covers them all (the preview's dry runs, then the jobs' committed batches; each kind of
edit once with its count and one example, the outlier first), and every repository's pull
request card and change note name the campaign issue."""

from __future__ import annotations

from pathlib import Path

from bot.plumbing import campaign_store
from jobs.features.campaigns.record import CampaignStatus
from tests.bot.conftest import OWNER, REPO, World, open_world
from tests.bot.test_app_campaigns import CAMPAIGN, dashboard, settle
from tests.kit.campaign_repos import CONFIG, service_files

PADDING = "".join(f"P{n} = {n}\n" for n in range(8))  # keeps the hunks apart
USER = f"from app.lib import old\n{PADDING}\n\ndef double(x):\n    return old(x) * 2\n"
ODD = f"{PADDING}CALLS = {{'double': old}}\n"  # one repository's own kind of edit
HEAD = ("### Edit shapes summed over 3 repositories: 3 kinds of edit in 7 hunks, "
        "1 to review first")
LINES = [
    f"- review first: 1 hunk, seen once like `{OWNER}/svc-c: app/user.py:22`: "
    "`CALLS = {'double': old}` → `CALLS = {'double': new}`",
    f"- 3 hunks (42%) like `{OWNER}/svc-a: app/user.py:1`: `from app.lib import old` → "
    "`from app.lib import new`",
    f"- 3 hunks (42%) like `{OWNER}/svc-a: app/user.py:13`: `return old(x) * 2` → "
    "`return new(x) * 2`",
]


def add(world: World, name: str, *, odd: bool = False) -> None:
    files = {**service_files(), "app/user.py": USER + (ODD if odd else "")}
    world.gh.add_repo(OWNER, name, files, config=CONFIG)
    world.gh.set_permission(f"{OWNER}/{name}", "maria", "maintain")


def shapes_section(page: str) -> list[str]:
    assert HEAD in page, page
    return page[page.index(HEAD):].splitlines()[4:7]


def test_the_dashboard_sums_shapes_and_each_pull_request_names_its_campaign(
        tmp_path: Path, redis_url: str) -> None:
    with open_world(tmp_path, redis_url) as world:
        for name in ("svc-a", "svc-b"):
            add(world, name)
        add(world, "svc-c", odd=True)
        world.gh.add_issue(REPO, "Move every service to new()",
                           CAMPAIGN.replace("canary: 2", "canary: 1"), user="maria")
        world.send("issues.labeled", issue_number=2, label="stepwise-campaign", sender="maria")
        world.work()
        assert shapes_section(dashboard(world)) == LINES  # the preview's dry runs

        world.comment("/stepwise campaign approve all", by="maria", on=2)
        settle(world)
        doc = campaign_store.find(world.redis, REPO, 2)
        assert doc is not None and doc.campaign.status is CampaignStatus.COMPLETED, \
            dashboard(world)
        assert shapes_section(dashboard(world)) == LINES  # the committed batches, summed

        for name in ("svc-a", "svc-c"):
            repo = world.gh.repos[f"{OWNER}/{name}"]
            pull = world.gh.pull_for(repo, "stepwise/issue-1")
            assert pull is not None
            body = pull.body or ""
            assert "\n\nPart of the campaign octo-org/widgets#2\n" in body, body
            assert body.count("Part of the campaign") == 1
            job = world.ctx.store.find(f"{OWNER}/{name}", 1)
            assert job is not None and job.part_of == "octo-org/widgets#2"
            note = world.gh.read_file(repo, job.note_path, ref="stepwise/issue-1") or ""
            assert "- Part of the campaign octo-org/widgets#2\n" in note, note
