"""Campaigns see and write only where their people may (issue 40, items 1 and 2), attacked
through signed webhooks into the real app against the fake GitHub: a private repository the
starter cannot read (or the control issue's readers cannot) leaves no name, reason, count or
figure in the issue's body, its comments, the logs or the records the task center shows, however
`find` is edited; `campaign add` answers alike for it and for a repository that does not exist;
nothing is created in a repository where whoever steers may not start a job ("waiting for someone
with access"); the allowlist of control repositories holds; campaign jobs match approvers by
account id."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from bot.plumbing import campaign_store
from jobs.features.campaigns.record import CampaignStatus, RepoState
from tests.bot.conftest import OWNER, REPO, World, open_world
from tests.bot.test_app_campaigns import CAMPAIGN, add_service, dashboard, settle
from tests.kit.campaign_repos import CONFIG, service_files
from tests.kit.local_e2e import config_text

SECRET_FILE = "app/settings.py"


def add_private(world: World, name: str, people: dict[str, str]) -> None:
    """A private service holding a committed token the attacker wants to read."""
    files = {**service_files(), SECRET_FILE: "TOKEN = 'ghp_s3cr3t'\n"}
    world.gh.add_repo(OWNER, name, files, config=CONFIG, private=True)
    for login, role in people.items():
        world.gh.set_permission(f"{OWNER}/{name}", login, role)


def everything_readable(world: World, caplog: pytest.LogCaptureFixture,
                        leave_out: tuple[str, ...] | list[str] = ()) -> str:
    """What the starter can read: the control issue's body and comments (but `leave_out`, the
    starter's own words and their echo), every record in Redis (the task center's pages render
    them), the App's log lines (but those quoting `leave_out`), check runs anywhere."""
    issue = world.gh.repos[REPO].issues[2]
    comments = [body for body in world.bodies(2) if body not in leave_out]
    records = [f"{key!r}{stored(world, key)!r}" for key in world.redis.keys("stepwise:*")]
    lines = [r.getMessage() + repr(r.__dict__) for r in caplog.records
             if r.name.startswith(("bot", "jobs"))]
    app_logs = [line for line in lines if not any(words in line for words in leave_out)]
    checks = [repr(run) for repo in world.gh.repos.values() for run in repo.ci.runs.values()]
    return "\n".join([issue.title, issue.body or "", *comments, *records, *app_logs, *checks])


def stored(world: World, key: bytes) -> object:
    kind = world.redis.type(key).decode()
    read = {"string": world.redis.get, "hash": world.redis.hgetall, "set": world.redis.smembers,
            "list": lambda k: world.redis.lrange(k, 0, -1),
            "zset": lambda k: world.redis.zrange(k, 0, -1)}
    return read[kind](key) if kind in read else kind


def label(world: World, body: str, *, by: str = "maria") -> None:
    world.gh.add_issue(REPO, "Move every service to new()", body, user=by)
    world.send("issues.labeled", issue_number=2, label="stepwise-campaign", sender=by)
    world.work()


def edit(world: World, body: str) -> None:
    world.gh.repos[REPO].issues[2].body = body
    world.send("issues.edited", issue_number=2, issue_body=body,
               issue_title="Move every service to new()", sender="maria")
    world.work()


def test_a_public_control_issue_shows_nothing_of_private_repositories(
        tmp_path: Path, redis_url: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    with open_world(tmp_path, redis_url) as world:
        add_service(world, "svc-a")
        add_private(world, "svc-hidden", {"ops": "admin"})        # maria cannot read it
        add_private(world, "svc-readable", {"maria": "maintain"})  # maria can; the public can't
        body = CAMPAIGN.replace("octo-org/svc-*", "octo-org/*")
        label(world, body)
        first = dashboard(world)
        assert "| octo-org/svc-a | 1 files, 2 targets: `app/user.py` |" in first

        # The attack: edit `find` and watch the counts, a character at a time.
        for guess in ("ghp_s", "ghp_x", "TOKEN"):
            edit(world, body.replace("\\bold\\b", guess).replace('"app/user.py"',
                                                                 '"app/**/*.py"'))
        # And `campaign add` by name: the same answer as for a repository that does not exist.
        for target in ("octo-org/svc-hidden", "octo-org/svc-readable", "octo-org/no-such"):
            world.comment(f"/stepwise campaign add {target}", by="maria", on=2)
            world.work()
        targets = ("octo-org/svc-hidden", "octo-org/svc-readable", "octo-org/no-such")
        replies = [body for body in world.bodies(2) if body.startswith("Previewing")]
        assert len({reply.replace(target, "X").split("<!--")[0] for reply, target in zip(
            replies, targets, strict=True)}) == 1, replies  # alike, bar the name typed
        assert "not added" in replies[0]

        said = [*replies, *(f"/stepwise campaign add {target}" for target in targets)]
        seen = everything_readable(world, caplog, leave_out=said)
        for target in targets:  # the starter's own words, echoed
            for echo in (f"{target}: not added", f"Previewing {target}", f"add {target}"):
                seen = seen.replace(echo, "")
        assert "svc-hidden" not in seen and "svc-readable" not in seen
        assert "Left out (1)" in dashboard(world)  # svc-a: `TOKEN` matches nothing there
        doc = campaign_store.find(world.redis, REPO, 2)
        assert doc is not None and list(doc.campaign.repos) == ["octo-org/svc-a"]
        # The private repositories were never cloned or read past the permission look-ups.
        assert not world.gh.requests_to("GET", r"/repos/octo-org/svc-(hidden|readable)/contents")


def test_a_private_control_issue_shows_private_repositories_only_its_readers_can_read(
        tmp_path: Path, redis_url: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    with open_world(tmp_path, redis_url) as world:
        control = world.gh.repos[REPO]
        control.private = True  # readers: maria (maintain), rita (read), tom (triage)
        team = {"maria": "maintain", "rita": "read", "tom": "write"}
        add_private(world, "svc-team", team)                                  # all of them
        add_private(world, "svc-inner", {"maria": "maintain", "tom": "write"})  # not rita
        add_private(world, "svc-hidden", {"ops": "admin"})                    # not maria
        add_service(world, "svc-a")
        label(world, CAMPAIGN)
        page = dashboard(world)
        assert "| octo-org/svc-team | 1 files, 2 targets: `app/user.py` |" in page
        assert "| octo-org/svc-a | 1 files, 2 targets: `app/user.py` |" in page
        seen = everything_readable(world, caplog)
        assert "svc-inner" not in seen and "svc-hidden" not in seen
        # One collaborator listing per private repository and one for the control issue; one
        # permission look-up per private repository, none per public one: cached per preview.
        lists = world.gh.requests_to("GET", r"/repos/[^/]+/[^/]+/collaborators$")
        assert len(lists) == 3, [r.path for r in lists]  # control, svc-team, svc-inner
        looks = world.gh.requests_to("GET", r"/collaborators/maria/permission")
        assert sorted(r.path.split("/")[3] for r in looks if "svc-" in r.path) == [
            "svc-hidden", "svc-inner", "svc-team"]


def test_approving_starts_nothing_where_the_steerer_may_not_and_waits_for_someone_with_access(
        tmp_path: Path, redis_url: str) -> None:
    with open_world(tmp_path, redis_url) as world:
        add_service(world, "svc-a")
        world.gh.add_repo(OWNER, "svc-b", service_files(),
                          config=CONFIG + 'approvers: ["olga"]\n')
        for login, role in {"maria": "read", "olga": "write"}.items():
            world.gh.set_permission(f"{OWNER}/svc-b", login, role)
        world.gh.set_permission(REPO, "olga", "write")
        label(world, CAMPAIGN)
        world.comment("/stepwise campaign approve all", by="maria", on=2)
        settle(world)
        doc = campaign_store.find(world.redis, REPO, 2)
        assert doc is not None
        entry = doc.campaign.repos["octo-org/svc-b"]
        assert entry.state is RepoState.NO_ACCESS, dashboard(world)
        assert entry.reason.startswith("waiting for someone with access: @maria may not start "
                                       "a job here")
        assert "Waiting for someone with access (1)" in dashboard(world)
        svc_b = world.gh.repos[f"{OWNER}/svc-b"]
        assert svc_b.issues == {}  # no issue, no job, no ping
        assert world.ctx.store.find(f"{OWNER}/svc-b", 1) is None

        # Someone with access approves it: the job starts in their name, approvers by id.
        world.comment("/stepwise campaign approve octo-org/svc-b", by="olga", on=2)
        settle(world)
        doc = campaign_store.find(world.redis, REPO, 2)
        assert doc is not None
        assert doc.campaign.repos["octo-org/svc-b"].state is RepoState.COMPLETED, \
            dashboard(world)
        job = world.ctx.store.find(f"{OWNER}/svc-b", 1)
        assert job is not None and job.server.approver_ids == {"olga": world.gh.user_id("olga")}


def test_a_spec_edit_rewrites_no_tracking_issue_where_the_resumer_may_not_steer(
        tmp_path: Path, redis_url: str) -> None:
    with open_world(tmp_path, redis_url) as world:
        add_service(world, "svc-a", broken=True)
        body = CAMPAIGN.replace("halt_when_failing: 0.4", "halt_when_failing: 0.9")
        label(world, body)
        world.comment("/stepwise campaign approve all", by="maria", on=2)
        settle(world)
        world.gh.set_permission(REPO, "nora", "write")  # may steer the campaign, not svc-a
        before = world.gh.repos[f"{OWNER}/svc-a"].issues[1].body
        edit(world, issue_text_of(world).replace("replace: 'new'", "replace: 'old ('")
             .replace("\\bold\\b", "\\bold\\("))
        world.comment("/stepwise campaign resume", by="nora", on=2)
        settle(world)
        assert world.gh.repos[f"{OWNER}/svc-a"].issues[1].body == before
        assert any("octo-org/svc-a: replan → needs_human (@nora may not steer in octo-org/svc-a"
                   in reply for reply in world.bodies(2)), world.bodies(2)


def issue_text_of(world: World) -> str:
    from bot.server.campaigns.tasks import issue_text
    return issue_text(world.gh.repos[REPO].issues[2].body or "")


def test_an_owner_allowlist_of_control_repositories_holds(tmp_path: Path,
                                                          redis_url: str) -> None:
    with open_world(tmp_path, redis_url,
                    campaign_control_repos=["octo-org/platform", "other/*"]) as world:
        add_service(world, "svc-a")
        label(world, CAMPAIGN)
        assert any("not one of octo-org's campaign control repositories" in b
                   for b in world.bodies(2))
        assert campaign_store.find(world.redis, REPO, 2) is None
        assert (world.gh.repos[REPO].issues[2].body or "") == CAMPAIGN


# (from tests/security/test_approver_ids.py: `approvers` name accounts, not logins)
def test_a_campaign_s_approvers_are_matched_by_account_too(tmp_path: Path, redis_url: str) -> None:
    with open_world(tmp_path, redis_url) as world:
        add_service(world, "svc-a")
        world.gh.push_files(REPO, world.repo.default_branch, {
            ".github/stepwise.yml": config_text(batches_per_milestone=1, approvers=["ana"])},
            "config")
        world.gh.set_permission(REPO, "ana", "write")
        world.gh.add_issue(REPO, "Move every service to new()", CAMPAIGN, user="ana")
        world.send("issues.labeled", issue_number=2, label="stepwise-campaign", sender="ana")
        world.work()
        doc = campaign_store.find(world.redis, REPO, 2)
        assert doc is not None and doc.approver_ids == {"ana": world.gh.user_id("ana")}
        world.gh.rename_user("ana", "ana-renamed")
        world.comment("/stepwise campaign cancel", by="ana", on=2)  # a new account on the login
        world.work()
        assert campaign_store.find(world.redis, REPO, 2).campaign.status is not \
            CampaignStatus.CANCELLED
        assert any("belonged to another GitHub account" in b for b in world.bodies(2))
        world.comment("/stepwise campaign cancel", by="ana-renamed", on=2)
        world.work()
        assert campaign_store.find(world.redis, REPO, 2).campaign.status is \
            CampaignStatus.CANCELLED
