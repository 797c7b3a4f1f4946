"""An uninstall (or a repository taken out of the installation) leaves no private code on the
worker's disk (issue 40): once GitHub confirms it and the jobs there have ended, the bare
clone with the job's worktree, attempt artifacts and transcripts inside, its lock and its
cached environments are deleted; an unconfirmed (replayed) uninstall deletes nothing."""

from __future__ import annotations

import json

import pytest

from jobs.kernel.model import JobStatus
from tests.bot.conftest import REPO, World
from tests.bot.test_app_events import at_first_milestone, uninstall
from tests.security.test_webhook_replays import installation_payload


def kept(world: World) -> list[str]:
    """The repository's files on the worker's disk, as paths under the workdir."""
    workdir = world.ctx.settings.workdir
    owner, name = REPO.split("/")
    roots = [workdir / "repos" / owner / f"{name}.git", workdir / "envs" / f"{owner}+{name}"]
    return [str(p.relative_to(workdir)) for root in roots if root.exists()
            for p in [root, *root.rglob("*")]]


@pytest.mark.parametrize(("event", "action"), [("installation", "deleted"),
                                               ("installation_repositories", "removed")])
def test_the_repositorys_files_are_deleted_once_its_jobs_end(world: World, event: str,
                                                            action: str) -> None:
    at_first_milestone(world)
    assert any("/stepwise/" in path for path in kept(world))  # the job's state, in the clone
    uninstall(world, event, action)
    assert world.job().status is JobStatus.FAILED
    assert kept(world) == []


def test_an_unconfirmed_uninstall_deletes_nothing(world: World) -> None:
    at_first_milestone(world)
    before = kept(world)
    world.post("installation", json.dumps(installation_payload("deleted")).encode())
    world.work()
    assert world.job().status is JobStatus.AWAITING_HUMAN and kept(world) == before
