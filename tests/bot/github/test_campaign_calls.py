"""The campaign calls against the fake GitHub: a tracking issue is found again past the first
page of the App's issues (a retried start must not open a second one), and who can read a
repository is listed from its collaborators."""

from __future__ import annotations

from bot.github.campaign_calls import create_issue_once, find_issue_by_marker, readers
from tests.bot.conftest import OWNER, REPO, World
from tests.kit.github_state import DEFAULT_INSTALLATION_ID


def test_a_tracking_issue_is_found_past_the_first_hundred(world: World) -> None:
    client = world.ctx.installation(DEFAULT_INSTALLATION_ID)
    marker = "<!-- stepwise-campaign-repo:c1 -->"
    world.gh.add_issue(REPO, "Campaign part", f"body\n{marker}", user="stepwise[bot]")
    for index in range(150):  # newer issues the App opened push it to the second page
        world.gh.add_issue(REPO, f"other {index}", "text", user="stepwise[bot]")
    found = find_issue_by_marker(client, OWNER, "widgets", creator="stepwise[bot]",
                                 marker=marker)
    assert found == 2
    again = create_issue_once(client, OWNER, "widgets", title="Campaign part", body=marker,
                              marker=marker, creator="stepwise[bot]")
    assert again == 2 and not any(":issue-created" in e for e in world.gh.effects)


def test_readers_are_the_collaborators_who_may_pull(world: World) -> None:
    client = world.ctx.installation(DEFAULT_INSTALLATION_ID)
    world.gh.set_permission(REPO, "Olga", "write")
    assert readers(client, OWNER, "widgets") == frozenset({"maria", "rita", "tom", "olga"})
