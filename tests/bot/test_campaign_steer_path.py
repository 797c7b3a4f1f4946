"""The campaign's entry to the one steer path (tests/bot/test_one_steer_path.py):
`/stepwise campaign cancel` on the control issue cancels the repositories' jobs in the
commenter's name, so a person is allowed or refused there exactly as through a job's own
comment or close (the same table), by bot/server/steer.py: signed webhooks into the real app
against the fake GitHub."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.bot.conftest import OWNER, REPO, World, open_world
from tests.bot.test_app_campaigns import CAMPAIGN, add_service
from tests.bot.test_one_steer_path import NOT_AN_APPROVER, WHO_MAY_CANCEL, answered_as_told
from tests.kit.campaign_repos import CONFIG, service_files

SERVICE = f"{OWNER}/svc-a"


def campaign_job(world: World, *, approvers: str = "") -> None:
    """svc-a's job, started by its campaign, waiting at its plan gate (no tick has passed it).
    In svc-a: tom has triage, wes write; both may steer the campaign on the control issue."""
    if approvers:
        world.gh.add_repo(OWNER, "svc-a", service_files(),
                          config=CONFIG + f'approvers: ["{approvers}"]\n')
    else:
        add_service(world, "svc-a")
    for login, role in {"tom": "triage", "wes": "write", "maria": "maintain"}.items():
        world.gh.set_permission(SERVICE, login, role)
        world.gh.set_permission(REPO, login, "write" if login != "maria" else "maintain")
    world.gh.add_issue(REPO, "Move every service to new()", CAMPAIGN, user="maria")
    starter = approvers or "maria"
    world.send("issues.labeled", issue_number=2, label="stepwise-campaign", sender=starter)
    world.work()
    world.comment("/stepwise campaign approve all", by=starter, on=2)
    world.work()
    job = world.ctx.store.find(SERVICE, 1)
    assert job is not None and job.status.value == "awaiting_human", job and job.status


def campaign_cancel_by(world: World, who: str) -> str:
    """`who` asks the campaign for `cancel` on its control issue; the App's answer."""
    world.comment("/stepwise campaign cancel", by=who, on=2)
    world.work()
    return "\n".join(world.bodies(2))


@pytest.mark.parametrize(("who", "refusal", "status"), WHO_MAY_CANCEL)
def test_a_triage_user_is_refused_and_a_writer_cancels_through_the_campaign_alike(
        who: str, refusal: str, status: str, tmp_path: Path, redis_url: str) -> None:
    with open_world(tmp_path, redis_url) as world:
        campaign_job(world)
        answered_as_told(campaign_cancel_by(world, who), refusal)
        job = world.ctx.store.find(SERVICE, 1)
        assert job is not None and job.status.value == status


def test_with_approvers_a_maintainer_off_the_list_is_refused_by_the_campaign_alike(
        tmp_path: Path, redis_url: str) -> None:
    with open_world(tmp_path, redis_url) as world:
        campaign_job(world, approvers="wes")
        job = world.ctx.store.find(SERVICE, 1)
        assert job is not None and job.server.approver_ids == {"wes": world.gh.user_id("wes")}
        assert NOT_AN_APPROVER in campaign_cancel_by(world, "maria")
        job = world.ctx.store.find(SERVICE, 1)
        assert job is not None and job.status.value == "awaiting_human"
