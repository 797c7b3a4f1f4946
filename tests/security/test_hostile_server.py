"""The hostile repository in server mode: signed webhooks, the worker, the real ServerContext
wiring of hidden paths (STEPWISE_WORKDIR and STEPWISE_PRIVATE_KEY_PATH) and bubblewrap."""

from __future__ import annotations

import hashlib

from jobs.kernel.model import BatchStatus, Gate, JobStatus
from tests.bot.conftest import OWNER
from tests.security import hostile
from tests.security.conftest import HostileServer

pytestmark = hostile.needs_bwrap


def test_the_hostile_repository_cannot_reach_the_key_the_clones_or_redis(
    hostile_server: HostileServer,
) -> None:
    world, targets = hostile_server.world, hostile_server.targets
    world.send("issues.labeled", issue_number=1, sender="maria")
    world.work()
    assert world.job().gate.kind is Gate.PLAN
    world.comment("/stepwise approve", by="maria")
    world.work()
    job = world.job()
    assert job.status is JobStatus.COMPLETED, (job.status, job.error)

    batch = job.batches[0]
    assert batch.status is BatchStatus.COMPLETED
    codemod, validation = batch.attempts[-1].commands
    key_digest = hashlib.sha256(hostile_server.key.read_bytes()).hexdigest()[:16]
    hostile.assert_evidence(job.baseline[0], codemod, validation, targets, key_digest=key_digest)

    # Neither the printed token nor any installation token the fake GitHub issued appears in
    # the record, a comment, the pull request or the change note.
    issued = list(world.gh.tokens)
    assert issued, "the worker never asked for an installation token"
    pull = world.gh.pull_for(world.repo, job.branch)
    assert pull is not None
    texts = [job.model_dump_json(), pull.body, *world.bodies(1), *world.bodies(pull.number),
             world.gh.read_file(world.repo, job.note_path, ref=job.branch) or ""]
    for secret in (targets.token, *issued):
        assert all(secret not in text for text in texts)
    # The mirror's git config never holds a credential either.
    configs = list((hostile_server.workdir / "repos" / OWNER).glob("*.git/config"))
    assert configs
    for config in configs:
        text = config.read_text()
        assert all(secret not in text for secret in issued) and "extraheader" not in text.lower()
