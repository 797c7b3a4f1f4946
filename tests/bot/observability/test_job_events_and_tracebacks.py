"""What an operator alerts and searches on: every gate, commit and job ending is one JSON log
line with the job's ids and the task that wrote it; with JSON logging on, even a
traceback that bypasses logging (an uncaught exception, in any thread) is a JSON line."""

from __future__ import annotations

import io
import json
import logging
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.log_context import with_log_context
from bot.observability.jsonlog import use_json_lines
from bot.server.handlers import handlers
from bot.server.worker import install_handlers
from tests.bot.conftest import open_world


@pytest.fixture
def events() -> Iterator[io.StringIO]:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    logger = logging.getLogger("stepwise.events")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    use_json_lines(logger)
    yield stream
    logger.removeHandler(handler)


def parsed(stream: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stream.getvalue().splitlines() if line.strip()]


def test_gates_commits_and_endings_are_json_events_with_job_batch_and_delivery_ids(
        tmp_path: Path, redis_url: str, events: io.StringIO) -> None:
    with open_world(tmp_path, redis_url) as world:
        install_handlers(with_log_context(handlers(world.ctx)))  # as `stepwise worker` does
        world.send("issues.labeled", issue_number=1, sender="maria", delivery_id="dlv-label-1")
        world.work()
        world.comment("/stepwise approve", by="maria", delivery_id="dlv-approve-1")
        world.work()
        world.comment("/stepwise cancel", by="maria", delivery_id="dlv-cancel-1")
        world.work()
        job = world.job()
    lines = parsed(events)
    kinds = [line["job_event"] for line in lines]
    assert "gate" in kinds and "batch" in kinds and "cancelled" in kinds, kinds
    for line in lines:
        assert line["job_id"] == job.id and line["repo"] == job.repo and line["issue"] == 1
    plan_gate = next(line for line in lines if line["job_event"] == "gate")
    assert plan_gate["gate_id"] == "plan-1" and plan_gate["status"] == "awaiting_human"
    commit = next(line for line in lines if line["job_event"] == "batch")
    assert commit["batch"] == 1
    ended = next(line for line in lines if line["job_event"] == "cancelled")
    assert ended["status"] == "cancelled" and ended["task"] in ("cancelled", "event", "advance")
    # Every line carries the context fields, and a step's lines the delivery that started its
    # chain (tests/bot/observability/test_delivery_trace.py).
    assert all("delivery_id" in line and "batch" in line for line in lines)
    assert plan_gate["delivery_id"] == "dlv-label-1" and commit["delivery_id"] == "dlv-approve-1"
    assert ended["delivery_id"] == "dlv-cancel-1"


CRASHING = """
import logging, threading, warnings
from bot.observability.logs import setup_logging
from bot.settings import Settings
setup_logging(Settings(log_format="json"))
logging.getLogger("demo").error("handled", exc_info=ValueError("in a handler"))
thread = threading.Thread(target=lambda: 1 / 0, name="worker-thread")
thread.start(); thread.join()
warnings.warn("a warning")
raise RuntimeError("uncaught at the top")
"""


def test_every_traceback_is_a_json_line_when_json_logging_is_on() -> None:
    done = subprocess.run([sys.executable, "-c", CRASHING], capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 1
    lines = [json.loads(line) for line in done.stderr.splitlines() if line.strip()]  # all JSON
    assert [line["level"] for line in lines] == ["error", "error", "warning", "critical"], lines
    assert "ZeroDivisionError" in lines[1]["exc"] and lines[1]["thread_name"] == "worker-thread"
    assert "RuntimeError: uncaught at the top" in lines[3]["exc"]
