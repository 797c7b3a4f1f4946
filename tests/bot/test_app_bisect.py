"""Split batches in server mode, end to end: signed webhooks, real Redis and RQ worker, the
real githubkit client against the loopback fake GitHub. The sample's batch 2 holds a good file
and one that breaks the tests: the good one is committed (through GitHub's Git Data API) as
batch 2 with a `Stepwise-Split` trailer, the other waits alone at the `failure` gate as
batch 4, and the card says so."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from jobs.features.bisect.record import bisect_of
from jobs.kernel.model import BatchStatus, Gate, JobStatus
from tests.bot.conftest import World, open_world
from tests.kit.local_e2e import BROKEN_MODULE


@pytest.fixture
def split_world(tmp_path: Path, redis_url: str) -> Iterator[World]:
    with open_world(tmp_path, redis_url, split_batches=True) as opened:
        yield opened


def test_a_failing_batch_is_split_and_its_culprit_waits_alone(split_world: World) -> None:
    world = split_world
    assert world.send("issues.labeled", issue_number=1, sender="maria").status_code == 202
    world.work()
    for _ in range(3):  # the plan, milestone 1, milestone 2 (one batch a milestone)
        world.comment("/stepwise approve", by="maria",
                      on=world.gh.pull_for(world.repo, world.job().branch).number
                      if world.gh.pull_for(world.repo, world.job().branch) else 1)
        world.work()
    job = world.job()
    assert job.status is JobStatus.AWAITING_HUMAN
    assert job.gate is not None and job.gate.kind is Gate.FAILURE and job.gate.batch == 4
    assert "set aside from batch 2" in job.gate.reason
    split, culprit = job.batch(2), job.batch(4)
    assert split.status is BatchStatus.COMPLETED and BROKEN_MODULE not in split.files
    assert culprit.files == [BROKEN_MODULE] and bisect_of(culprit).split_from == 2
    assert job.batch(3).status is BatchStatus.COMPLETED  # the good work went on
    # The branch on GitHub: batch 2's commit names the file set aside; batch 4 has none.
    commits = world.gh.commits(world.repo, job.branch)
    second = [c for c in commits if "Stepwise-Batch: 2" in c.message]
    assert len(second) == 1 and f"Stepwise-Split: {BROKEN_MODULE}" in second[0].message
    assert not any("Stepwise-Batch: 4" in c.message for c in commits)
    # The card (the PR body) says batch 2 was split, and where its file went.
    pull = world.gh.pull_for(world.repo, job.branch)
    assert pull is not None
    assert "Split batches:" in pull.body and "split after" in pull.body
    assert "set aside as batch 4" in pull.body and "set aside from batch 2" in pull.body
    # `skip` at the culprit's gate finishes the job; the note lists the split.
    world.comment("/stepwise skip total.py imports old_sum by name", by="maria", on=pull.number)
    world.work()
    job = world.job()
    assert job.status is JobStatus.COMPLETED, job.status
    note = world.gh.read_file(world.repo, job.note_path, ref=job.branch)
    assert note is not None and "## Split batches" in note and "batch 4" in note
