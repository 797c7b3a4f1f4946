"""A campaign through the App: the label on a control repository's issue previews the
installation's repositories in the issue's body, `/stepwise campaign` comments steer it,
canaries run first, a failing canary halts it, `resume` starts the next wave, and each
repository gets an ordinary job with its own tracking issue and pull request."""

from __future__ import annotations

from pathlib import Path

from bot.plumbing import campaign_store
from bot.server.campaigns.tasks import END, START, issue_text, tick_all
from jobs.features.campaigns.record import CampaignStatus, RepoState
from tests.bot.conftest import OWNER, REPO, World, open_world
from tests.kit.campaign_repos import CONFIG, service_files

CAMPAIGN = """Every service moves from old() to new().

```stepwise
recipe: replace
paths: ["app/user.py"]
find: ['\\bold\\b']
replace: 'new'
campaign:
  repositories: ["octo-org/svc-*"]
  canary: 2
  wave: 2
  halt_when_failing: 0.4
```
"""


def add_service(world: World, name: str, *, broken: bool = False) -> None:
    world.gh.add_repo(OWNER, name, service_files(broken=broken), config=CONFIG)
    for login, role in {"maria": "maintain", "rita": "read"}.items():
        world.gh.set_permission(f"{OWNER}/{name}", login, role)


def settle(world: World, rounds: int = 12) -> None:
    """Work every queued step, tick the campaigns (a reconciler pass), until nothing moves."""
    for _ in range(rounds):
        world.work()
        before = campaign_store.fingerprint(world.redis, campaign_store.campaign_key(REPO, 2))
        tick_all(world.ctx)
        if world.queued() == 0 and campaign_store.fingerprint(
                world.redis, campaign_store.campaign_key(REPO, 2)) == before:
            return


def dashboard(world: World) -> str:
    body = world.gh.repos[REPO].issues[2].body or ""
    assert body.count(START) == 1 and body.count(END) == 1, body
    return body


def test_a_campaign_runs_through_the_app(tmp_path: Path, redis_url: str) -> None:
    with open_world(tmp_path, redis_url) as world:
        for name, broken in (("svc-a", False), ("svc-b", True), ("svc-c", False),
                             ("svc-d", False), ("tools", False)):
            add_service(world, name, broken=broken)
        world.gh.add_issue(REPO, "Move every service to new()", CAMPAIGN, user="maria")

        # The label previews: nothing is changed anywhere, the dashboard is in the issue body.
        assert world.send("issues.labeled", issue_number=2, label="stepwise-campaign",
                          sender="maria").status_code == 202
        world.work()
        body = dashboard(world)
        assert body.startswith("Every service moves") and "```stepwise" in body  # kept
        assert "This is the preview" in body and "`/stepwise campaign approve all`" in body
        # What a reviewer approves, per repository: the files by name, the validation command.
        assert ("| octo-org/svc-a | 1 files, 2 targets: `app/user.py` | "
                "`python -m unittest discover -s tests -q` |") in body
        assert "octo-org/tools" in body and "not named in `campaign.repositories`" in body
        # The edit, dry-run on one file of each (identical here: shown once, for all four).
        assert ("octo-org/svc-a, octo-org/svc-b, octo-org/svc-c, octo-org/svc-d:\n\n```diff\n"
                "--- a/app/user.py\n+++ b/app/user.py\n") in body, body
        assert "-    return old(x) * 2\n+    return new(x) * 2\n```" in body
        assert not any(":issue-created" in e for e in world.gh.effects)

        # Someone with read access cannot steer it.
        world.comment("/stepwise campaign approve all", by="rita", on=2)
        world.work()
        assert any("Refused" in b for b in world.bodies(2))
        assert campaign_store.find(world.redis, REPO, 2).campaign.status is CampaignStatus.PLAN

        # Approve: the two canaries start; svc-b's tests break, so the campaign halts.
        world.comment("/stepwise campaign approve all", by="maria", on=2)
        settle(world)
        doc = campaign_store.find(world.redis, REPO, 2)
        assert doc is not None
        states = {name: entry.state for name, entry in doc.campaign.repos.items()}
        assert states["octo-org/svc-a"] is RepoState.COMPLETED, dashboard(world)
        assert states["octo-org/svc-b"] is RepoState.NEEDS_HUMAN
        assert states["octo-org/svc-c"] is RepoState.APPROVED  # the wave never started
        assert doc.campaign.status is CampaignStatus.HALTED
        page = dashboard(world)
        assert "Status: **halted**: 1 of 2 started repositories need a human" in page
        # svc-b's row: the commands that answer its failure gate, linked where they are said
        # (its tracking issue: its only batch failed, so it has no pull request).
        assert world.gh.pull_for(f"{OWNER}/svc-b", "stepwise/issue-1") is None
        web = world.gh.base_url.replace("/api/v3", "").rstrip("/")
        assert (f"on [octo-org/svc-b\\#\u200b1]({web}/{OWNER}/svc-b/issues/1):<br>"
                "`/stepwise retry`<br>`/stepwise approve`<br>`/stepwise skip <reason>` |"
                ) in page, page  # each command whole on a line of its own in the cell
        assert "more than `halt_when_failing` 40%" in page  # code spans render as code
        assert "/stepwise status on" not in page
        svc_a = world.gh.repos[f"{OWNER}/svc-a"]
        tracking = svc_a.issues[1]
        assert "Part of the Stepwise campaign octo-org/widgets#2" in (tracking.body or "")
        pull = world.gh.pull_for(svc_a, "stepwise/issue-1")
        assert pull is not None
        # The pull request's card and the change note link the campaign issue.
        assert "Part of the campaign octo-org/widgets#2\n" in (pull.body or "")
        job = world.ctx.store.find(f"{OWNER}/svc-a", 1)
        assert job is not None and job.note_path
        note = world.gh.read_file(svc_a, job.note_path, ref="stepwise/issue-1") or ""
        assert "- Part of the campaign octo-org/widgets#2\n" in note, note
        assert "return new(x) * 2" in world.gh.read_file(svc_a, "app/user.py",
                                                         ref="stepwise/issue-1")

        # Resume: the next wave runs; skipping svc-b ends the campaign.
        world.comment("/stepwise campaign resume", by="maria", on=2)
        settle(world)
        # A skip by someone who may steer the campaign but not svc-b is refused and changes
        # nothing: no reason lands in svc-b's row.
        world.gh.set_permission(REPO, "nora", "write")
        world.comment("/stepwise campaign skip octo-org/svc-b not my repository", by="nora", on=2)
        settle(world)
        assert any("octo-org/svc-b: `skip` refused: @nora may not steer in octo-org/svc-b" in b
                   for b in world.bodies(2)), world.bodies(2)
        assert "not my repository" not in dashboard(world)
        assert campaign_store.find(world.redis, REPO, 2).campaign.repos[
            f"{OWNER}/svc-b"].state is RepoState.NEEDS_HUMAN
        world.comment("/stepwise campaign skip octo-org/svc-b its fix lands upstream", by="maria",
                      on=2)
        settle(world)
        doc = campaign_store.find(world.redis, REPO, 2)
        assert doc is not None and doc.campaign.status is CampaignStatus.COMPLETED, \
            dashboard(world)
        for name in ("svc-c", "svc-d"):
            assert doc.campaign.repos[f"{OWNER}/{name}"].state is RepoState.COMPLETED
        assert world.ctx.store.find(f"{OWNER}/svc-b", 1).status.value == "cancelled"
        page = dashboard(world)
        assert "Status: **completed**" in page
        # One tally for every figure: the preview's 4 files in scope (one per service), 3
        # done, svc-b's skipped; every completed row links its pull request.
        assert "Burndown: 3 of 3 files done" in page, page
        assert page.count("(baseline passes)") == 4  # svc-b breaks only after the change
        web = world.gh.base_url.replace("/api/v3", "").rstrip("/")
        for name in ("svc-a", "svc-c", "svc-d"):
            pull = world.gh.pull_for(f"{OWNER}/{name}", "stepwise/issue-1")
            assert pull is not None
            entry = doc.campaign.repos[f"{OWNER}/{name}"]
            assert entry.pull == f"{web}/{OWNER}/{name}/pull/{pull.number}", entry.pull
            assert f"]({entry.pull})" in page, (name, page)
        assert campaign_store.active_keys(world.redis) == []  # the reconciler stops ticking it


def test_a_spec_edit_after_approval_pauses_and_resume_replans(tmp_path: Path,
                                                              redis_url: str) -> None:
    with open_world(tmp_path, redis_url) as world:
        add_service(world, "svc-a", broken=True)
        add_service(world, "svc-b")
        body = CAMPAIGN.replace("halt_when_failing: 0.4", "halt_when_failing: 0.9")
        world.gh.add_issue(REPO, "Move every service to new()", body, user="maria")
        world.send("issues.labeled", issue_number=2, label="stepwise-campaign", sender="maria")
        world.work()
        world.comment("/stepwise campaign approve all", by="maria", on=2)
        settle(world)
        doc = campaign_store.find(world.redis, REPO, 2)
        assert doc is not None and doc.campaign.repos["octo-org/svc-a"].state \
            is RepoState.NEEDS_HUMAN
        # The App's own dashboard edit is not a spec change.
        edited = world.gh.repos[REPO].issues[2].body or ""
        world.send("issues.edited", issue_number=2, issue_body=edited, sender="stepwise[bot]",
                   sender_type="Bot")
        world.work()
        assert campaign_store.find(world.redis, REPO, 2).campaign.status is CampaignStatus.RUNNING
        # The fix: `old(x)` becomes `old (x)`, which svc-a (no `new`) passes too.
        fixed = issue_text(edited).replace("replace: 'new'", "replace: 'old ('").replace(
            "\\bold\\b", "\\bold\\(")
        world.gh.repos[REPO].issues[2].body = fixed
        world.send("issues.edited", issue_number=2, issue_body=fixed,
                   issue_title="Move every service to new()", sender="maria")
        world.work()
        doc = campaign_store.find(world.redis, REPO, 2)
        assert doc is not None and doc.campaign.status is CampaignStatus.PAUSED
        assert any("paused until `resume`" in b for b in world.bodies(2))
        world.comment("/stepwise campaign resume", by="maria", on=2)
        settle(world)
        doc = campaign_store.find(world.redis, REPO, 2)
        assert doc is not None and doc.campaign.status is CampaignStatus.COMPLETED, \
            dashboard(world)
        svc_a = world.gh.repos[f"{OWNER}/svc-a"]
        assert "return old (x) * 2" in world.gh.read_file(svc_a, "app/user.py",
                                                          ref="stepwise/issue-1")
        assert "replace: old (" in (svc_a.issues[1].body or "")  # the tracking issue too


def test_a_plan_gate_that_opens_again_waits_for_a_human_instead_of_looping(
        tmp_path: Path, redis_url: str) -> None:
    """The campaign passes a repository's plan gate once: when the job opens it again (its
    baseline validation fails), the repository needs a human; it is never approved in a loop."""
    with open_world(tmp_path, redis_url) as world:
        files = service_files()
        files["tests/test_user.py"] = str(files["tests/test_user.py"]).replace(
            "double(2), 4", "double(2), 5")  # fails before any change: the baseline fails
        world.gh.add_repo(OWNER, "svc-a", files, config=CONFIG)
        world.gh.set_permission(f"{OWNER}/svc-a", "maria", "maintain")
        world.gh.add_issue(REPO, "Move every service to new()",
                           CAMPAIGN.replace("halt_when_failing: 0.4", "halt_when_failing: 1"),
                           user="maria")
        world.send("issues.labeled", issue_number=2, label="stepwise-campaign", sender="maria")
        world.work()
        world.comment("/stepwise campaign approve all", by="maria", on=2)
        settle(world)
        settle(world)  # more ticks: none may pass the gate again
        doc = campaign_store.find(world.redis, REPO, 2)
        assert doc is not None
        entry = doc.campaign.repos[f"{OWNER}/svc-a"]
        assert entry.state is RepoState.NEEDS_HUMAN, dashboard(world)
        assert "opened again after the campaign passed it" in entry.reason
        assert "baseline validation fails" in entry.reason
        job = world.ctx.store.find(f"{OWNER}/svc-a", 1)
        assert job is not None and job.gate is not None and job.gate.kind == "plan"
        assert "Needs a human (1)" in dashboard(world)
        # The baseline where it was run, beside the validation command that ran it.
        assert "`python -m unittest discover -s tests -q` (baseline **fails**) |" in \
            dashboard(world)
        again = [e for e in job.events if "the plan was approved, but the baseline" in e.message]
        assert len(again) == 1, again  # approved once, not once per tick
