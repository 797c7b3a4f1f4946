"""One steer path (issue 42, item 5): a job is cancelled the same way whether it is asked by a
comment (`/stepwise cancel`), by closing its issue, or by its campaign (`/stepwise campaign
cancel` on the control issue, which cancels the repositories' jobs in the commenter's name).
All three go through bot/server/steer.py, so the same person is allowed or refused alike, for
the same reason: signed webhooks into the real app against the fake GitHub.

The task center is read-only (it shows jobs to whoever holds the dashboard token, who has no
GitHub account there): it has no steering entry to test."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.bot.conftest import OWNER, REPO, World, open_world
from tests.bot.test_app_campaigns import CAMPAIGN, add_service
from tests.kit.campaign_repos import CONFIG, service_files

SERVICE = f"{OWNER}/svc-a"
ROOT = Path(__file__).resolve().parents[2]


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


def cancel_by(world: World, entry: str, who: str) -> str:
    """`who` asks for `cancel` through `entry`; the App's answer."""
    if entry == "comment":
        world.comment("/stepwise cancel", by=who, on=1, repo=SERVICE)
        world.work()
        return "\n".join(c.body for c in world.gh.comments_on(SERVICE, 1))
    if entry == "close":
        world.send("issues.closed", issue_number=1, sender=who, repo=SERVICE)
        world.work()
        return "\n".join(c.body for c in world.gh.comments_on(SERVICE, 1))
    world.comment("/stepwise campaign cancel", by=who, on=2)
    world.work()
    return "\n".join(world.bodies(2))


ENTRIES = ("comment", "close", "campaign")


@pytest.mark.parametrize(("who", "refusal", "status"), [
    ("tom", "needs write, maintain or admin permission; @tom has triage permission",
     "awaiting_human"),
    ("wes", "", "cancelled"),
])
@pytest.mark.parametrize("entry", ENTRIES)
def test_a_triage_user_is_refused_and_a_writer_cancels_alike_through_every_entry(
        entry: str, who: str, refusal: str, status: str, tmp_path: Path, redis_url: str) -> None:
    with open_world(tmp_path, redis_url) as world:
        campaign_job(world)
        answer = cancel_by(world, entry, who)
        if refusal:
            assert refusal in answer, answer
        else:
            assert "may not steer" not in answer and "Refused" not in answer, answer
        job = world.ctx.store.find(SERVICE, 1)
        assert job is not None and job.status.value == status


@pytest.mark.parametrize("entry", ENTRIES)
def test_with_approvers_a_maintainer_off_the_list_is_refused_alike_and_an_approver_is_not(
        entry: str, tmp_path: Path, redis_url: str) -> None:
    with open_world(tmp_path, redis_url) as world:
        campaign_job(world, approvers="wes")
        job = world.ctx.store.find(SERVICE, 1)
        assert job is not None and job.server.approver_ids == {"wes": world.gh.user_id("wes")}
        answer = cancel_by(world, entry, "maria")
        assert "is for this repository's `approvers`; @maria is not on the list" in answer
        job = world.ctx.store.find(SERVICE, 1)
        assert job is not None and job.status.value == "awaiting_human"
        if entry == "campaign":
            return  # the campaign is cancelled now: the job's own entries are tested above
        cancel_by(world, entry, "wes")
        job = world.ctx.store.find(SERVICE, 1)
        assert job is not None and job.status.value == "cancelled"


def test_only_the_steer_path_decides_who_may_steer() -> None:
    """`steering_decision` (bot/steering.py) is called by bot/server/steer.py alone, and by the
    job start, which is not steering; no entry applies a verb to a record itself."""
    callers: dict[str, set[str]] = {}
    for path in sorted((ROOT / "bot").rglob("*.py")):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                    node.func.id in ("steering_decision", "apply_verb"):
                callers.setdefault(node.func.id, set()).add(str(path.relative_to(ROOT)))
    assert callers == {"steering_decision": {"bot/server/steer.py", "bot/server/start_job.py"}}
