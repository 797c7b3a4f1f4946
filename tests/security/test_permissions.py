"""Who may start and steer, through signed webhooks over real HTTP, Redis, RQ and the fake GitHub.

Each refusal is checked twice: the answer on GitHub, and that nothing changed (no job, the
same record version, no branch, nothing left in the queue).
"""

from __future__ import annotations

from jobs.kernel.model import Gate, JobStatus
from tests.bot.conftest import ISSUE_BODY, REPO, World
from tests.kit.local_e2e import config_text

TRUSTING_CONFIG = config_text(batches_per_milestone=1, require_plan_approval=False)
EDITED_BODY = ISSUE_BODY.replace('exclude: ["calc/legacy.py"]',
                                 'exclude: ["calc/legacy.py", "calc/gamma/**"]')


def trust_plans(world: World) -> None:
    """The repository's default branch says plans need no approval."""
    world.gh.push_files(REPO, world.repo.default_branch,
                        {".github/stepwise.yml": TRUSTING_CONFIG}, "skip plan approval")


def edit_body(world: World, number: int, body: str, *, by: str) -> None:
    """Someone edits the issue body (on the fake, and the issues.edited delivery)."""
    issue = world.gh.issue(REPO, number)
    old, issue.body = issue.body, body
    response = world.send("issues.edited", issue_number=number, issue_body=body,
                          issue_user=issue.user, changes={"body": {"from": old}}, sender=by)
    assert response.status_code == 202, response.text


def test_a_label_from_a_triage_user_starts_nothing_and_is_answered(world: World) -> None:
    assert world.send("issues.labeled", issue_number=1, sender="tom").status_code == 202
    world.work()
    assert world.ctx.store.find(REPO, 1) is None
    assert world.queued() == 0
    assert world.gh.branch_head(world.repo, "stepwise/issue-1") is None
    refusal = [b for b in world.bodies(1) if "did not start" in b]
    assert len(refusal) == 1 and "@tom has triage permission" in refusal[0]


def test_a_read_only_commenter_is_refused_and_nothing_changes(world: World) -> None:
    world.send("issues.labeled", issue_number=1, sender="maria")
    world.work()
    before = world.job()
    assert before.gate.kind is Gate.PLAN
    world.comment("/stepwise approve\n/stepwise cancel\n/stepwise instruct delete everything",
                  by="rita")
    world.work()
    after = world.job()
    assert after.version == before.version and after.gate.id == before.gate.id
    assert after.status is JobStatus.AWAITING_HUMAN and after.instructions == []
    assert after.approved_digest is None
    reply = [b for b in world.bodies(1) if "Refused" in b]
    assert len(reply) == 1 and reply[0].count("@rita has read permission") == 3
    assert world.gh.branch_head(world.repo, before.branch) is None  # nothing was pushed
    assert world.queued() == 0


def test_an_outsiders_issue_stops_at_the_plan_even_when_the_config_skips_it(world: World) -> None:
    trust_plans(world)
    # Control: the maintainer's own issue runs past the plan with this config.
    world.send("issues.labeled", issue_number=1, sender="maria")
    world.work()
    trusted = world.job(1)
    assert trusted.approved_digest is not None
    assert trusted.gate is None or trusted.gate.kind is not Gate.PLAN
    # The same spec written by someone without write permission: the plan gate holds.
    number = world.gh.add_issue(REPO, "Replace old_sum() with new_sum()", ISSUE_BODY,
                                user="olga")
    world.send("issues.labeled", issue_number=number, sender="maria")
    world.work()
    job = world.job(number)
    assert job.untrusted_spec is True
    assert job.status is JobStatus.AWAITING_HUMAN and job.gate.kind is Gate.PLAN
    assert job.approved_digest is None
    assert all(not b.attempts for b in job.batches)  # nothing was edited or run past baseline
    assert world.gh.branch_head(world.repo, job.branch) is None
    assert any("Waiting at gate `plan`" in b for b in world.bodies(number))


def approved_then_edited(world: World) -> tuple[str, str]:
    """Approve the plan (batch 1 is committed, the milestone gate opens), then edit the body."""
    world.send("issues.labeled", issue_number=1, sender="maria")
    world.work()
    world.comment("/stepwise approve", by="maria")
    world.work()
    job = world.job()
    assert job.approved_digest == job.spec_digest and job.gate.kind is Gate.MILESTONE
    edit_body(world, 1, EDITED_BODY, by="maria")
    world.work()
    return job.head_sha, job.spec_digest


def test_editing_the_body_after_approval_opens_spec_changed(world: World) -> None:
    committed, approved = approved_then_edited(world)
    job = world.job()
    assert job.status is JobStatus.AWAITING_HUMAN and job.gate.kind is Gate.SPEC_CHANGED
    assert job.head_sha == committed and job.spec_digest == approved  # nothing ran on the edit
    assert world.gh.branch_head(world.repo, job.branch) == committed
    # Approving re-plans with the edited spec, and the new plan waits for its own approval.
    pull = world.gh.pull_for(world.repo, job.branch)
    assert pull is not None
    world.comment("/stepwise approve", by="maria", on=pull.number)
    world.work()
    job = world.job()
    assert job.gate.kind is Gate.PLAN and job.approved_digest is None
    assert job.spec_digest != approved and "calc/gamma/**" in job.spec.exclude


def test_the_spec_changed_gate_is_announced_on_github(world: World) -> None:
    approved_then_edited(world)
    job = world.job()
    assert job.gate.kind is Gate.SPEC_CHANGED
    pull = world.gh.pull_for(world.repo, job.branch)
    assert pull is not None and "spec_changed" in (pull.body or "")
    assert any("Waiting at gate `spec_changed`" in b for b in world.bodies(pull.number))


def test_an_outsiders_edit_after_approval_makes_the_new_plan_wait(world: World) -> None:
    trust_plans(world)
    world.gh.set_permission(REPO, "olga", "read")
    world.send("issues.labeled", issue_number=1, sender="maria")
    world.work()
    assert world.job().approved_digest is not None  # trusted: no plan gate
    edit_body(world, 1, EDITED_BODY, by="olga")
    world.work()
    job = world.job()
    assert job.gate.kind is Gate.SPEC_CHANGED and job.untrusted_spec is True
    pull = world.gh.pull_for(world.repo, job.branch)
    world.comment("/stepwise approve", by="maria", on=pull.number if pull else 1)
    world.work()
    job = world.job()
    # Re-planned with the edited spec, and stopped at the plan although the config skips it.
    assert job.gate.kind is Gate.PLAN and job.approved_digest is None
    assert "calc/gamma/**" in job.spec.exclude


# --- closing is steering (issue 11, item 4) --------------------------------------------------------


def at_plan(world: World) -> None:
    world.send("issues.labeled", issue_number=1, sender="maria")
    world.work()
    assert world.job().gate.kind is Gate.PLAN


def test_closing_the_issue_without_permission_leaves_the_job_going(world: World) -> None:
    at_plan(world)
    before = world.job()
    world.gh.close_issue(REPO, 1)
    assert world.send("issues.closed", issue_number=1, sender="rita",
                      labels=["stepwise"]).status_code == 202
    world.work()
    after = world.job()
    assert after.status is JobStatus.AWAITING_HUMAN and after.gate.id == before.gate.id
    told = [b for b in world.bodies(1) if "@rita closed this issue" in b]
    assert len(told) == 1 and "the Stepwise job goes on" in told[0]
    assert "@rita has read permission" in told[0] and "`/stepwise cancel`" in told[0]
    # The maintainer's close is steering: it cancels.
    world.send("issues.closed", issue_number=1, sender="maria", labels=["stepwise"])
    world.work()
    assert world.job().status is JobStatus.CANCELLED


def test_closing_the_pull_request_as_triage_does_not_cancel(world: World) -> None:
    at_plan(world)
    world.comment("/stepwise approve", by="maria")
    world.work()
    job = world.job()
    pull = world.gh.pull_for(world.repo, job.branch)
    assert pull is not None and job.gate.kind is Gate.MILESTONE
    world.send("pull_request.closed", pr_number=pull.number, head_ref=job.branch, merged=False,
               sender="tom")
    world.work()
    assert world.job().status is JobStatus.AWAITING_HUMAN
    assert any("@tom closed this pull request" in b and "@tom has triage permission" in b
               for b in world.bodies(pull.number))


# --- custom repository roles and @org/team approvers (issue 15) -------------------------------------


def use_config(world: World, **overrides: object) -> None:
    world.gh.push_files(REPO, world.repo.default_branch,
                        {".github/stepwise.yml": config_text(batches_per_milestone=1, **overrides)},
                        "config")


def test_a_custom_role_based_on_write_may_start_and_steer(world: World) -> None:
    world.gh.add_custom_role("release-manager", base="write")
    world.gh.add_custom_role("issue-wrangler", base="triage")
    world.gh.set_permission(REPO, "rel", "release-manager")
    world.gh.set_permission(REPO, "wren", "issue-wrangler")
    world.send("issues.labeled", issue_number=1, sender="wren")
    world.work()
    assert world.ctx.store.find(REPO, 1) is None
    assert any("@wren has triage permission" in b for b in world.bodies(1))
    world.send("issues.labeled", issue_number=1, sender="rel")
    world.work()
    assert world.job().gate.kind is Gate.PLAN
    world.comment("/stepwise approve", by="rel")
    world.work()
    assert world.job().approved_digest is not None


def test_team_approvers_are_resolved_and_a_refusal_names_the_team(world: World) -> None:
    use_config(world, approvers=["@octo-org/release"])
    world.gh.add_team("octo-org", "release", ["tina"])
    world.gh.set_permission(REPO, "tina", "read")  # on the list, but approvers need write too
    world.send("issues.labeled", issue_number=1, sender="tina")
    world.work()
    assert world.ctx.store.find(REPO, 1) is None
    assert any("for `approvers` too" in b and "@tina is a member of @octo-org/release" in b
               and "has read permission" in b for b in world.bodies(1))
    world.gh.set_permission(REPO, "tina", "write")
    world.send("issues.labeled", issue_number=1, sender="maria")
    world.work()
    assert world.ctx.store.find(REPO, 1) is None
    refusal = [b for b in world.bodies(1) if "did not start" in b and "@maria" in b]
    assert len(refusal) == 1 and "`@octo-org/release`" in refusal[0]
    world.send("issues.labeled", issue_number=1, sender="tina")
    world.work()
    assert world.job().gate.kind is Gate.PLAN
    world.comment("/stepwise approve", by="maria")
    world.work()
    assert world.job().approved_digest is None
    assert any("Refused" in b and "`@octo-org/release`" in b for b in world.bodies(1))
    world.comment("/stepwise approve", by="tina")
    world.work()
    assert world.job().approved_digest is not None
    teams = world.gh.requests_to("GET", r"^/orgs/octo-org/teams/release/memberships/")
    assert teams and {r.accepted_permissions for r in teams} == {"members=read"}
