"""The App's commits are by its bot user, through signed webhooks on the fake GitHub:
`stepwise[bot] <<id>+stepwise[bot]@users.noreply.<host>>` with the id GitHub gives the bot user
(read once, then kept), github.com or the Enterprise Server's web host; with `commit_via: git`
the author and committer are both that identity, with the API GitHub commits (and signs) as
GitHub, authored by it."""

from __future__ import annotations

from pathlib import Path

from tests.bot.conftest import World, open_world
from tests.kit.github_git import git
from tests.kit.local_e2e import config_text, sample_files


def identities(world: World, branch: str) -> set[str]:
    """`author|committer` of each commit the job added to `branch`."""
    out = git(world.repo.path, "log", "--format=%an <%ae>|%cn <%ce>",
              f"refs/heads/main..refs/heads/{branch}").decode()
    return set(out.splitlines())


def run_to_first_milestone(world: World) -> str:
    world.send("issues.labeled", issue_number=1, sender="maria")
    world.work()
    world.comment("/stepwise approve", by="maria")
    world.work()
    job = world.job()
    assert job.batch(1).commit and job.gate.kind == "milestone"
    return str(job.branch)


def bot(world: World, host: str) -> str:
    login = world.gh.bot_login
    return f"{login} <{world.gh.user_id(login)}+{login}@users.noreply.{host}>"


def test_git_commits_are_authored_and_committed_by_the_bot_user(tmp_path: Path,
                                                                 redis_url: str) -> None:
    files = sample_files(broken=True, config=config_text(batches_per_milestone=1,
                                                         commit_via="git"))
    with open_world(tmp_path, redis_url, files=files) as world:
        branch = run_to_first_milestone(world)
        me = bot(world, "github.com")
        assert identities(world, branch) == {f"{me}|{me}"}
        # The bot user's id was asked for once, however many commits and steps.
        asked = world.gh.requests_to("GET", r"/users/stepwise(%5B|\[)bot(%5D|\])$")
        assert len(asked) == 1


def test_api_commits_are_authored_by_the_bot_user_on_the_enterprise_host(
        tmp_path: Path, redis_url: str) -> None:
    with open_world(tmp_path, redis_url, github={"enterprise": True}) as world:
        branch = run_to_first_milestone(world)
        host = world.gh.web_url.split("://", 1)[1].split("/", 1)[0].split(":", 1)[0]
        me = bot(world, host)
        assert identities(world, branch) == {f"{me}|GitHub <noreply@github.com>"}
        assert "github.com>|" not in "".join(identities(world, branch))
