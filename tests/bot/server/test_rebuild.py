"""Rebuilding a job after its Redis record was lost (bot/server/rebuild.py), against the fake
GitHub: the existing change-note commit and gate comments are adopted by their hidden markers,
no note commit is pushed twice, old gate ids are never reused, and the current gate gets a
fresh comment of its own."""

from __future__ import annotations

import re
from pathlib import Path

from jobs.kernel.model import BatchStatus, Gate, JobStatus
from tests.bot.conftest import World, open_world
from tests.bot.server.test_reliability import approved
from tests.kit.local_e2e import config_text, sample_files

GATE_MARKER = re.compile(r"<!-- stepwise:[^:]+:gate:([a-z_]+-\d+) -->")


def gate_comments(world: World, number: int) -> dict[str, tuple[int, str]]:
    """Gate id -> (comment id, body), from the hidden markers of the comments on `number`."""
    found = {}
    for comment in world.gh.comments_on(world.repo, number):
        match = GATE_MARKER.search(comment.body)
        if match:
            found[match.group(1)] = (comment.id, comment.body)
    return found


def number_of(gate_id: str) -> int:
    return int(gate_id.rsplit("-", 1)[1])


def note_commits(world: World, branch: str) -> list[str]:
    return [s for s in world.gh.git_log(world.repo, branch) if "change note" in s]


def test_a_rebuild_adopts_the_note_and_gate_comments_and_opens_a_fresh_gate(
        tmp_path: Path, redis_url: str) -> None:
    # A note commit per milestone (notes: per_milestone), so the rebuilt job meets one.
    files = sample_files(config=config_text(batches_per_milestone=1, notes="per_milestone"))
    with open_world(tmp_path, redis_url, files=files) as world:
        approved(world)
        world.work()
        before = world.job()
        assert before.gate is not None and before.gate.kind is Gate.MILESTONE
        pull = world.gh.pull_for(world.repo, before.branch)
        notes_before = note_commits(world, before.branch)
        assert len(notes_before) == 1, notes_before
        old_gates = {**gate_comments(world, 1), **gate_comments(world, pull.number)}
        assert before.gate.id in old_gates, old_gates
        world.redis.flushdb()  # Redis lost everything

        world.comment("/stepwise approve", by="maria", on=pull.number)
        world.work()  # rebuilt, batch 1 and the note adopted: back at milestone 1's gate
        rebuilt = world.job()
        assert rebuilt.server.rebuilt and rebuilt.id == before.id
        assert rebuilt.gate is not None and rebuilt.gate.kind is Gate.MILESTONE
        assert rebuilt.gate.id not in old_gates  # never an old gate's id: numbered after them
        assert number_of(rebuilt.gate.id) > max(number_of(g) for g in old_gates)
        # The note of milestone 1 is on the branch once, adopted, not pushed again.
        assert note_commits(world, rebuilt.branch) == notes_before
        assert rebuilt.note_commit is not None
        # The old gate comments are untouched, and the current gate has a comment of its own.
        now = {**gate_comments(world, 1), **gate_comments(world, pull.number)}
        for gate_id, (comment_id, body) in old_gates.items():
            assert now[gate_id] == (comment_id, body), f"the old gate {gate_id} was rewritten"
        new_id, new_body = now[rebuilt.gate.id]
        assert new_id not in {cid for cid, _ in old_gates.values()}
        assert f"Waiting at gate `milestone` ({rebuilt.gate.id})" in new_body
        # The adopted comments are known to the record by their markers.
        assert {f"gate:{g}" for g in old_gates} <= set(rebuilt.server.comments)

        world.comment("/stepwise approve", by="maria", on=pull.number)
        world.work()
        job = world.job()
        assert job.status is JobStatus.COMPLETED or job.gate is not None, job.status
        assert job.batch(1).adopted and job.batch(2).status is BatchStatus.COMPLETED
        labels = [s.split("change note — ", 1)[-1] for s in note_commits(world, job.branch)]
        assert len(labels) == len(set(labels)), labels  # no note label pushed twice
