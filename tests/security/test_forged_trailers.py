"""Forged trailers (issue 40), through the App: a writer who is not an approver pushes a commit
carrying the job's id and a batch number (both public in the pull request), or a note, revert or
base-merge trailer, even under the App's bot name. The fake GitHub signs only what the App makes
through the API, as GitHub does; the worker asks GitHub. Nothing forged is adopted: the
`human_commit` gate opens naming it, and once a maintainer takes it in, it is listed among the
commits by people."""

from __future__ import annotations

from pathlib import Path

import pytest

from jobs.features.base_moves.record import moves
from jobs.kernel.model import BatchStatus, Gate
from tests.bot.conftest import REPO, World, open_world
from tests.bot.test_app_events import at_first_milestone
from tests.kit.github_git import git, git_text
from tests.kit.local_e2e import config_text, sample_files

FORGED = {
    "batch": "Stepwise-Batch: 2\nStepwise-Milestone: 1",
    "note": "Stepwise-Note: milestone 1/2",
    "revert": "Stepwise-Revert: 1",
    "base merge": "Stepwise-Base-Merge: " + "0" * 40,
}


@pytest.mark.parametrize("kind", sorted(FORGED))
@pytest.mark.parametrize("as_the_app", [False, True])
def test_a_writers_commit_with_our_trailers_is_a_human_commit(world: World, kind: str,
                                                              as_the_app: bool) -> None:
    at_first_milestone(world)
    job = world.job()
    bot = world.gh.bot_login
    author = (bot, f"{world.gh.user_id(bot)}+{bot}@users.noreply.github.com") if as_the_app \
        else ("Wally Writer", "wally@example.invalid")
    target = job.batch(2).files[0]
    message = (f"stepwise(#1): {kind} — {target}\n\n"
               f"Stepwise-Job: {job.id}\n{FORGED[kind]}\n")
    forged = world.gh.push_files(REPO, job.branch, {target: "FORGED = True\n"}, message,
                                 author=author)
    world.send("push", ref=f"refs/heads/{job.branch}", sender="wally")
    pull = world.gh.pull_for(world.repo, job.branch)
    world.comment("/stepwise approve", by="maria", on=pull.number)
    world.work()
    job = world.job()
    assert job.gate is not None and job.gate.kind is Gate.HUMAN_COMMIT, (job.status, job.gate)
    assert forged[:7] in job.gate.reason
    assert job.batch(2).status is BatchStatus.PENDING and not job.batch(2).adopted
    assert job.note_commit != forged and all(m.commit != forged for m in moves(job).merges)
    assert job.batch(1).status is BatchStatus.COMPLETED  # a forged revert reverts nothing
    world.comment("/stepwise approve", by="maria", on=pull.number)
    world.work()
    job = world.job()
    assert [c.sha for c in job.human_commits] == [forged]  # "Commits by people"
    assert job.batch(2).commit != forged


def test_stepwises_own_signed_commits_are_still_adopted_after_a_lost_save(world: World) -> None:
    """The control: batch 1's commit, made by the App (signed by GitHub, of the tree recorded
    before it landed), whose record was lost after it landed (the worker died), is adopted:
    not redone, not gated."""
    at_first_milestone(world)
    job = world.job()
    batch = job.batch(1)
    commit = batch.commit
    assert commit and batch.tree and job.head_sha == commit
    batch.status, batch.commit, batch.adopted = BatchStatus.IN_PROGRESS, None, False
    job.head_sha = job.base_sha  # as saved before it landed
    world.ctx.store.save(job)
    pull = world.gh.pull_for(world.repo, job.branch)
    world.comment("/stepwise approve", by="maria", on=pull.number)
    world.work()
    job = world.job()
    assert job.gate is None or job.gate.kind is not Gate.HUMAN_COMMIT, job.gate
    assert job.batch(1).commit == commit and job.batch(1).adopted
    assert job.human_commits == []
    assert world.gh.requests_to("GET", rf"^/repos/{REPO}/git/commits/{commit}$")  # asked GitHub


def test_with_git_pushes_a_copy_of_stepwises_commit_is_a_human_commit(tmp_path: Path,
                                                                      redis_url: str) -> None:
    """`commit_via: git` signs nothing, so a writer can copy everything of the commit Stepwise
    made for batch 1: the job id and batch trailers, the bot's name as author and committer,
    and exactly the validated tree. Here the worker died before its push (its record holds the
    tree and the id of the commit it made, the branch is still at the base) and the writer
    pushed the copy: it is not adopted; the human_commit gate names it."""
    files = sample_files(broken=True, config=config_text(batches_per_milestone=1,
                                                         commit_via="git"))
    with open_world(tmp_path, redis_url, files=files) as world:
        at_first_milestone(world)
        job = world.job()
        made = job.batch(1).commit
        assert made in job.landing_commits and job.head_sha == made
        bare = world.repo.path
        who = git_text(bare, "show", "-s", "--format=%an%x00%ae%x00%cn%x00%ce", made).split("\0")
        forged = git(bare, "commit-tree", f"{made}^{{tree}}", "-p", job.base_sha, "-m",
                     git_text(bare, "show", "-s", "--format=%B", made), env={
                         "GIT_AUTHOR_NAME": who[0], "GIT_AUTHOR_EMAIL": who[1],
                         "GIT_COMMITTER_NAME": who[2], "GIT_COMMITTER_EMAIL": who[3],
                         "GIT_COMMITTER_DATE": "2001-01-01T00:00:00Z"}).decode().strip()
        assert forged != made
        git(bare, "update-ref", f"refs/heads/{job.branch}", forged)
        batch = job.batch(1)
        batch.status, batch.commit, batch.adopted = BatchStatus.IN_PROGRESS, None, False
        job.head_sha = job.base_sha  # as saved before it landed
        world.ctx.store.save(job)
        world.send("push", ref=f"refs/heads/{job.branch}", sender="wally")
        pull = world.gh.pull_for(world.repo, job.branch)
        world.comment("/stepwise approve", by="maria", on=pull.number)
        world.work()
        job = world.job()
        assert job.gate is not None and job.gate.kind is Gate.HUMAN_COMMIT, (job.status, job.gate)
        assert forged[:7] in job.gate.reason
        assert job.batch(1).commit != forged and not job.batch(1).adopted
