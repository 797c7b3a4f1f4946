"""The reconciler's passes take turns over every waiting job, not only the newest ones."""

from __future__ import annotations

from datetime import UTC, datetime

import redis

from bot.plumbing.idle_index import owes
from bot.plumbing.keys import RECONCILE_ROUND
from bot.server.reconciler import next_round_in, take_turns
from jobs.adapters.codec import document
from jobs.kernel.job import OpenGate
from jobs.kernel.model import Gate, JobStatus
from tests.kit.records import make_job


def test_every_job_gets_a_turn_before_any_gets_a_second(client: redis.Redis) -> None:
    ids = [f"{n}-job" for n in range(120)]
    seen: list[str] = []
    for _ in range(3):
        seen += take_turns(client, "waiting", ids, 50)
    assert sorted(seen[:120]) == sorted(ids)  # 50 + 50 + the last 20, then it wraps round
    assert len(set(seen[:120])) == 120
    assert seen[120:] == sorted(ids)[:30]


def test_jobs_that_arrive_or_leave_between_passes_keep_the_order(client: redis.Redis
                                                                  ) -> None:
    ids = [f"job-{n:03d}" for n in range(10)]
    assert take_turns(client, "waiting", ids, 4) == ids[:4]
    fewer = [i for i in ids if i != "job-004"] + ["job-002a"]  # one answered, one new
    assert take_turns(client, "waiting", fewer, 4) == ["job-005", "job-006", "job-007",
                                                           "job-008"]
    assert take_turns(client, "waiting", fewer, 4) == ["job-009", "job-000", "job-001",
                                                           "job-002"]


def test_kinds_have_their_own_turns_and_nothing_is_taken_for_nothing(client: redis.Redis
                                                                     ) -> None:
    ids = ["a", "b", "c"]
    assert take_turns(client, "owing", ids, 2) == ["a", "b"]
    assert take_turns(client, "waiting", ids, 2) == ["a", "b"]
    assert take_turns(client, "waiting", ids, 0) == []
    assert take_turns(client, "waiting", [], 5) == []
    assert take_turns(client, "owing", ids, 2) == ["c", "a"]


def test_a_worker_that_finds_the_round_taken_tries_again_when_the_round_ends(
        client: redis.Redis) -> None:
    """Passes start one interval apart: a worker whose try finds the round taken tries again
    when it ends, not on its own clock one interval later (the next pass up to two intervals
    after the last: a gate left unshown waited 7.3 s against a 5 s interval)."""
    assert next_round_in(client, 20) == 0.0  # no round now: at once
    client.set(RECONCILE_ROUND, "1", px=1500)
    assert 0 < next_round_in(client, 20) <= 1.5  # when the round another worker queued ends
    client.persist(RECONCILE_ROUND)
    assert next_round_in(client, 20) == 20  # a round without an end (never set so): an interval


def test_a_pass_that_stops_early_moves_the_turn_only_past_what_it_read(
        client: redis.Redis) -> None:
    from bot.server.reconciler import took_turn

    ids = [f"job-{n}" for n in range(6)]
    chosen = take_turns(client, "waiting", ids, 4, move=False)
    assert chosen == ids[:4]
    took_turn(client, "waiting", chosen[1])  # its budget ran out after two
    assert take_turns(client, "waiting", ids, 4) == ids[2:6]


def test_a_gate_never_shown_is_owed_only_by_a_job_with_an_installation() -> None:
    """What a worker that died between opening a gate and owing its comment leaves: the
    reconciler reads it from the stored document (the server state holds the installation)."""
    gate = OpenGate(id="plan-1", kind=Gate.PLAN, opened_at=datetime.now(UTC), reason="ready")
    job = make_job(status=JobStatus.AWAITING_HUMAN, gate=gate)
    assert not owes(document(job))  # local mode: nothing to publish to
    job.server.installation_id = 7
    assert owes(document(job))
    job.gate = gate.model_copy(update={"shown_at": datetime.now(UTC)})
    assert not owes(document(job))
