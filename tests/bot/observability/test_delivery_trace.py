"""Every JSON log line of a job's later steps names the webhook that set the chain going: its
`delivery_id` (X-GitHub-Delivery) and `trigger: webhook`, carried in each queued task's payload
from the webhook's task to the steps it queues and the steps those queue. Steps a reconciler pass
set going (a command read back without its webhook) say `delivery_id: null, trigger: reconciler`."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from bot.log_context import split_trace, trace_payload, traced
from bot.observability.jsonlog import JsonFormatter
from bot.plumbing.queue import enqueue, queue
from bot.server.handlers import handlers
from bot.server.reconciler import reconcile_round
from bot.server.worker import install_handlers
from tests.bot.conftest import open_world
from tests.kit.waiting import ShiftedClock


@pytest.fixture
def lines() -> Iterator[io.StringIO]:
    """Every record of every logger, as the worker writes it with JSON logging on."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    yield stream
    root.removeHandler(handler)
    root.setLevel(level)


def parsed(stream: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stream.getvalue().splitlines() if line.startswith("{")]


def test_the_steps_a_webhook_set_going_log_its_delivery_id(
        tmp_path: Path, redis_url: str, lines: io.StringIO) -> None:
    with open_world(tmp_path, redis_url) as world:
        install_handlers(handlers(world.ctx))  # the trace needs no task wrapper: perform binds it
        world.send("issues.labeled", issue_number=1, sender="maria", delivery_id="dlv-label-1")
        world.work()
        world.comment("/stepwise approve", by="maria", delivery_id="dlv-approve-1")
        world.work()
        job = world.job()
    records = parsed(lines)
    steps = [r for r in records if r.get("job_event")]
    plan_gate = next(r for r in steps if r["job_event"] == "gate")
    assert (plan_gate["delivery_id"], plan_gate["trigger"]) == ("dlv-label-1", "webhook")
    commit = next(r for r in steps if r["job_event"] == "batch")
    assert (commit["delivery_id"], commit["trigger"]) == ("dlv-approve-1", "webhook")
    later_gates = [r for r in steps if r["job_event"] == "gate"][1:]
    assert later_gates and all(r["delivery_id"] == "dlv-approve-1" for r in later_gates)
    assert job.gate is not None and later_gates[-1]["gate_id"] == job.gate.id
    # Every line written inside a task of this job's chains says which webhook started it.
    traced_lines = [r for r in records if r.get("trigger")]
    assert {r["delivery_id"] for r in traced_lines} == {"dlv-label-1", "dlv-approve-1"}
    assert all(r["trigger"] == "webhook" for r in traced_lines)


def test_steps_a_reconciler_pass_set_going_say_so_and_name_no_delivery(
        tmp_path: Path, redis_url: str, lines: io.StringIO) -> None:
    with open_world(tmp_path, redis_url) as world:
        install_handlers(handlers(world.ctx))
        world.ctx.clock = clock = ShiftedClock()
        world.send("issues.labeled", issue_number=1, sender="maria", delivery_id="dlv-label-2")
        world.work()
        clock.advance(1.01)  # GitHub's timestamps have one-second resolution
        world.gh.add_comment(world.repo, 1, "/stepwise approve", user="maria")  # no webhook
        clock.advance(120)  # past the grace a webhook still on its way gets
        assert reconcile_round(world.ctx)  # queues the pass as the reaper's thread does
        world.work()
        assert world.job().batch(1).commit
    records = parsed(lines)
    commit = next(r for r in records if r.get("job_event") == "batch")
    assert commit["delivery_id"] is None and commit["trigger"] == "reconciler"
    read_back = [r for r in records if r.get("trigger") == "reconciler"]
    assert read_back and all(r["delivery_id"] is None for r in read_back)
    plan_gate = next(r for r in records if r.get("job_event") == "gate")
    assert plan_gate["delivery_id"] == "dlv-label-2"


def test_a_queued_task_carries_the_trace_bound_where_it_was_queued(redis_url: str) -> None:
    connection = redis.Redis.from_url(redis_url)
    connection.flushdb()
    with traced("dlv-9", "webhook"):
        task = enqueue(connection, "advance", {"job_id": "1-x"})
    assert task is not None
    assert task.args[1] == {"job_id": "1-x", "trace": {"delivery_id": "dlv-9", "trigger": "webhook"}}
    assert split_trace(task.args[1]) == ({"job_id": "1-x"},
                                         {"delivery_id": "dlv-9", "trigger": "webhook"})
    assert trace_payload({"job_id": "1-y"}) == {"job_id": "1-y"}  # nothing bound: no trace
    bogus = {"job_id": "1-z", "trace": {"delivery_id": "x", "trigger": "anything"}}
    assert split_trace(bogus) == ({"job_id": "1-z"}, None)  # an unknown trigger is dropped
    queue(connection).empty()
    connection.flushdb()
