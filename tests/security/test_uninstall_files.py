"""An uninstall (or a repository taken out of the installation) leaves no private code on the
worker's disk (issue 40): once GitHub confirms it and the jobs there have ended, the bare
clone with the job's worktree, attempt artifacts and transcripts inside, its lock and its
cached environments are deleted; an unconfirmed (replayed) uninstall deletes nothing. The
deletion waits for a task that uses the clone (the lock every user of a clone holds), and a
task that starts afterwards makes no clone again."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from bot.github import clone_use
from bot.server import uninstall_files
from jobs.basics.errors import StepwiseError
from jobs.kernel.model import JobStatus
from tests.bot.conftest import REPO, World
from tests.bot.test_app_events import at_first_milestone, uninstall
from tests.kit.webhooks import make_event
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


HOLDER = """
import pathlib, sys
from bot.github import clone_use
lock, clone = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
clone_use.hold(lock)
(clone / "stepwise" / "worktrees" / "issue-1").mkdir(parents=True, exist_ok=True)
print("using", flush=True)
sys.stdin.readline()
(clone / "stepwise" / "worktrees" / "issue-1" / "transcript.json").write_text("private")
print("done", flush=True)
"""


def waits_on(lock: Path) -> bool:
    """Whether some process waits for an exclusive flock on `lock` (/proc/locks: `->`)."""
    if not lock.exists():
        return False
    inode = f":{os.stat(lock).st_ino} "
    return any("-> FLOCK" in line and "WRITE" in line and inode in line
               for line in Path("/proc/locks").read_text().splitlines())


def test_the_cleanup_waits_for_a_task_using_the_clone_and_deletes_what_it_wrote(
        tmp_path: Path) -> None:
    """A task (a real process) uses the clone: it holds the clone's lock as every task that
    opens a clone does, and writes into its worktree. The uninstall's cleanup (another
    thread) waits for it instead of deleting under it; once the task ends, everything of the
    repository is deleted, what the task wrote last included."""
    workdir = tmp_path / "work"
    clone = workdir / "repos" / "octo-org" / "widgets.git"
    (clone / "objects").mkdir(parents=True)
    (clone / "HEAD").write_text("ref: refs/heads/main\n")
    lock = clone_use.users_lock(workdir, REPO)
    task = subprocess.Popen([sys.executable, "-c", HOLDER, str(lock), str(clone)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert task.stdout is not None and task.stdin is not None
        assert task.stdout.readline().strip() == "using"
        deleted: list[list[Path]] = []
        cleanup = threading.Thread(target=lambda: deleted.append(
            uninstall_files.forget_repository(workdir, REPO, why="installation.deleted")))
        cleanup.start()
        deadline = time.monotonic() + 30
        while not waits_on(lock):
            assert time.monotonic() < deadline, "the cleanup never waited for the task"
            assert cleanup.is_alive(), f"the cleanup did not wait: {deleted}"
            time.sleep(0.02)
        assert (clone / "stepwise" / "worktrees" / "issue-1").is_dir()  # not deleted under it
        task.stdin.write("go on\n")
        task.stdin.flush()
        assert task.stdout.readline().strip() == "done"
        assert task.wait(timeout=30) == 0
        cleanup.join(timeout=30)
        assert not cleanup.is_alive()
        assert not clone.exists() and not lock.exists()
        assert clone in deleted[0]
    finally:
        task.kill()
        task.wait()


def test_a_task_that_starts_after_the_cleanup_makes_no_clone_again(world: World) -> None:
    """A task queued before the removal runs after the cleanup: opening the clone is refused
    (`ServerContext.mirror`, the door of every task that uses a clone: job steps, starts,
    rebuilds, campaign previews), nothing is cloned again, not even its lock; once GitHub says
    the repository was added back, it can be cloned again."""
    at_first_milestone(world)
    uninstall(world, "installation_repositories", "removed")
    assert kept(world) == []
    workdir = world.ctx.settings.workdir
    client = world.ctx.installation(1)
    with pytest.raises(StepwiseError) as refused:
        world.ctx.mirror(client, REPO, world.repo.clone_url, "main")
    assert refused.value.code == "installation_removed"
    assert "Stepwise lost access to octo-org/widgets" in refused.value.message
    assert kept(world) == [] and not clone_use.users_lock(workdir, REPO).exists()
    # Added back (GitHub sends installation_repositories.added): cloned again on demand.
    world.gh.installations[1].repos.append(REPO)
    payload = make_event("installation.created", repo=REPO)
    payload.pop("repositories", None)
    payload.update(action="added", repository_selection="selected", repositories_removed=[],
                   repositories_added=[{"id": world.repo.id, "full_name": REPO,
                                        "name": world.repo.name}])
    assert world.post("installation_repositories",
                      json.dumps(payload).encode()).status_code == 202
    try:
        world.ctx.mirror(client, REPO, world.repo.clone_url, "main")
        assert any(path.endswith("widgets.git/HEAD") for path in kept(world))
    finally:
        clone_use.release_all()  # as the task that opened it would at its end
