"""`approvers` name accounts, not logins: the list is resolved to account ids when the job
starts and commands are matched by the sender's id, so an approver who renames still approves,
and a new account that claims the freed login cannot (issue 28). Through signed webhooks over
real HTTP, Redis, RQ and the fake GitHub, which renames accounts as GitHub does."""

from __future__ import annotations

import pytest

from bot.authz import decide
from jobs.kernel.model import Gate
from tests.bot.conftest import REPO, World
from tests.kit.local_e2e import config_text


def _start_with_approver(world: World, login: str) -> None:
    world.gh.set_permission(REPO, login, "write")  # approvers need write too
    world.gh.push_files(REPO, world.repo.default_branch, {
        ".github/stepwise.yml": config_text(batches_per_milestone=1, approvers=[login])},
        "config")
    world.send("issues.labeled", issue_number=1, sender=login)
    world.work()
    assert world.job().gate.kind is Gate.PLAN
    assert world.job().server.approver_ids == {login: world.gh.user_id(login)}


def test_a_renamed_approver_still_approves(world: World) -> None:
    _start_with_approver(world, "ana")
    account = world.gh.user_id("ana")
    world.gh.rename_user("ana", "ana-renamed")
    world.comment("/stepwise approve", by="ana-renamed")
    world.work()
    job = world.job()
    assert job.approved_digest is not None, world.bodies(1)
    assert world.gh.user_id("ana-renamed") == account


def test_a_new_account_on_an_approver_s_freed_login_is_refused(world: World) -> None:
    _start_with_approver(world, "ana")
    before = world.job()
    world.gh.rename_user("ana", "ana-renamed")
    assert world.gh.user_id("ana") != before.server.approver_ids["ana"]  # someone claims it
    world.comment("/stepwise approve", by="ana")
    world.work()
    after = world.job()
    assert after.approved_digest is None and after.version == before.version
    refusal = [b for b in world.bodies(1) if "Refused" in b]
    assert len(refusal) == 1 and "belonged to another GitHub account" in refusal[0]


def test_closing_by_a_new_account_on_the_freed_login_cancels_nothing(world: World) -> None:
    _start_with_approver(world, "ana")
    world.gh.rename_user("ana", "ana-renamed")
    world.gh.issue(REPO, 1).state = "closed"
    world.send("issues.closed", issue_number=1, sender="ana")
    world.work()
    assert not world.job().is_terminal
    answers = [b for b in world.bodies(1) if "closed this issue, but the Stepwise job goes on" in b]
    assert len(answers) == 1 and "belonged to another GitHub account" in answers[0]


def test_the_decision_is_by_id_once_the_list_is_resolved() -> None:
    ids = {"ana": 7}
    kept = decide(login="ana-renamed", role="write", approvers=["ana"], action="approving",
                  actor_id=7, approver_ids=ids)
    claimed = decide(login="ana", role="write", approvers=["ana"], action="approving",
                     actor_id=8, approver_ids=ids)
    gone = decide(login="bo", role="write", approvers=["bo"], action="approving", actor_id=9,
                  approver_ids={"bo": 0})  # no account held the login when the job started
    assert kept.allowed and not claimed.allowed and not gone.allowed
    assert decide(login="ana", role="admin", approvers=["ana"], action="approving").allowed  # legacy


@pytest.mark.parametrize("role", ["read", "triage", "", "none"])
def test_an_approver_whose_access_was_lowered_steers_no_more(role: str) -> None:
    decision = decide(login="ana", role=role, approvers=["ana"], action="approving", actor_id=7,
                      approver_ids={"ana": 7})
    assert not decision.allowed
    assert "needs write, maintain or admin permission, for `approvers` too" in decision.reason
    assert "@ana is on the approvers list" in decision.reason
