"""Fewer writes per batch (bot/github/coalesce.py): a job working through batches back to back
edits its pull request's body (the card) and moves its `Stepwise` check run at most once a
minute, never sends the body unchanged, and still ends with GitHub showing the final state.
Through the App against the fake GitHub (which counts every write, and refuses past 80 a
minute)."""

from __future__ import annotations

import itertools
from pathlib import Path

from jobs.kernel.model import BatchStatus, JobStatus
from tests.bot.conftest import REPO, open_world
from tests.kit.local_e2e import config_text, sample_files


def test_back_to_back_batches_edit_the_card_and_job_run_once_not_per_batch(
        tmp_path: Path, redis_url: str) -> None:
    files = sample_files(config=config_text(batch_size=1, batches_per_milestone=50))
    with open_world(tmp_path, redis_url, files=files) as world:
        world.send("issues.labeled", issue_number=1, sender="maria")
        world.work()
        world.comment("/stepwise approve", by="maria")
        world.work()
        job = world.job()
        assert job.status is JobStatus.COMPLETED, (job.status, job.gate)
        batches = sum(b.status is BatchStatus.COMPLETED for b in job.batches)
        assert batches >= 4
        assert job.server.pull is not None
        pull = job.server.pull.number
        edits = [r.json["body"] for r in world.gh.requests_to("PATCH", rf"/pulls/{pull}$")
                 if r.json and "body" in r.json]
        assert len(edits) < batches  # not one per batch (within a minute: the final one)
        assert all(a != b for a, b in itertools.pairwise(edits))  # never unchanged
        job_runs = [r for r in world.gh.requests_to("POST", r"/check-runs$")
                    if r.json and r.json.get("name") == "Stepwise"]
        assert len(job_runs) < batches
        # GitHub shows the final state: the card as the job ends, the run completed on the head
        forge = world.ctx.forge(world.ctx.installation(1), REPO)
        assert world.gh.repos[REPO].pulls[pull].body == forge.pull_body(job)
        [final] = [r for r in world.repo.ci.runs.values() if r.app.slug == "stepwise"
                   and r.name == "Stepwise" and r.head_sha == job.head_sha]
        assert final.status == "completed" and final.conclusion == "success"
        assert world.gh.rate_limits.refused_writes == 0
