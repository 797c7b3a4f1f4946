"""One steer path (issue 42, item 5): a job is cancelled the same way whether it is asked by a
comment (`/stepwise cancel`) or by closing its issue; a feature's entry (a campaign's
`/stepwise campaign cancel`: tests/bot/test_campaign_steer_path.py) is held to the same table.
All go through bot/server/steer.py, so the same person is allowed or refused alike, for the
same reason: signed webhooks into the real app against the fake GitHub.

The task center is read-only (it shows jobs to whoever holds the dashboard token, who has no
GitHub account there): it has no steering entry to test."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.bot.conftest import REPO, World, open_world
from tests.kit.local_e2e import config_text, sample_files

ROOT = Path(__file__).resolve().parents[2]
# Who asks, what the refusal says ("" when allowed), and the job's status after: through
# every entry alike. tom has triage, wes write.
WHO_MAY_CANCEL = [
    ("tom", "needs write, maintain or admin permission; @tom has triage permission",
     "awaiting_human"),
    ("wes", "", "cancelled"),
]
NOT_AN_APPROVER = "is for this repository's `approvers`; @maria is not on the list"


def plain_job(world: World, *, approvers: str = "") -> None:
    """Issue 1's job, started by a label, waiting at its plan gate (no tick has passed it)."""
    world.gh.set_permission(REPO, "wes", "write")
    world.send("issues.labeled", issue_number=1, sender=approvers or "maria")
    world.work()
    job = world.ctx.store.find(REPO, 1)
    assert job is not None and job.status.value == "awaiting_human", job and job.status


def cancel_by(world: World, entry: str, who: str, *, repo: str = REPO) -> str:
    """`who` asks for `cancel` of issue 1's job in `repo` through `entry` (a comment or a
    close); the App's answer."""
    if entry == "comment":
        world.comment("/stepwise cancel", by=who, on=1, repo=repo)
    else:
        world.send("issues.closed", issue_number=1, sender=who, repo=repo)
    world.work()
    return "\n".join(c.body for c in world.gh.comments_on(repo, 1))


ENTRIES = ("comment", "close")


def answered_as_told(answer: str, refusal: str) -> None:
    if refusal:
        assert refusal in answer, answer
    else:
        assert "may not steer" not in answer and "Refused" not in answer, answer


@pytest.mark.parametrize(("who", "refusal", "status"), WHO_MAY_CANCEL)
@pytest.mark.parametrize("entry", ENTRIES)
def test_a_triage_user_is_refused_and_a_writer_cancels_alike_through_every_entry(
        entry: str, who: str, refusal: str, status: str, tmp_path: Path, redis_url: str) -> None:
    with open_world(tmp_path, redis_url) as world:
        plain_job(world)
        answered_as_told(cancel_by(world, entry, who), refusal)
        job = world.ctx.store.find(REPO, 1)
        assert job is not None and job.status.value == status


@pytest.mark.parametrize("entry", ENTRIES)
def test_with_approvers_a_maintainer_off_the_list_is_refused_alike_and_an_approver_is_not(
        entry: str, tmp_path: Path, redis_url: str) -> None:
    files = sample_files(broken=True, config=config_text(batches_per_milestone=1,
                                                         approvers=["wes"]))
    with open_world(tmp_path, redis_url, files=files) as world:
        plain_job(world, approvers="wes")
        job = world.ctx.store.find(REPO, 1)
        assert job is not None and job.server.approver_ids == {"wes": world.gh.user_id("wes")}
        assert NOT_AN_APPROVER in cancel_by(world, entry, "maria")
        job = world.ctx.store.find(REPO, 1)
        assert job is not None and job.status.value == "awaiting_human"
        cancel_by(world, entry, "wes")
        job = world.ctx.store.find(REPO, 1)
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
