"""Structured logs: JSON lines with the same context fields in the web app and the workers."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest

from bot.log_context import CONTEXT_FIELDS, bind, with_log_context
from bot.observability.jsonlog import JsonFormatter, json_uvicorn_config, use_json_lines
from bot.observability.logs import uvicorn_log_config
from jobs.basics.redact import REDACTED, RedactingFilter

GH_TOKEN = "ghs_" + "Q1w2E3r4T5" * 4


@pytest.fixture
def captured() -> Iterator[tuple[logging.Logger, io.StringIO]]:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(RedactingFilter())
    logger = logging.getLogger("stepwise.test.jsonlog")
    logger.handlers, logger.propagate = [handler], False
    logger.setLevel(logging.INFO)
    use_json_lines(logger)
    yield logger, stream
    logger.handlers = []


def lines(stream: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def test_each_record_is_one_json_line_with_the_context_fields(
        captured: tuple[logging.Logger, io.StringIO]) -> None:
    logger, stream = captured
    logger.info("plain")
    logger.warning("transient fault; retrying", extra={"job_id": "7-abc", "delay_s": 5.0,
                                                        "delivery": "d-1", "code": "github_5xx"})
    plain, retry = lines(stream)
    assert set(CONTEXT_FIELDS) <= set(plain) and plain["message"] == "plain"
    assert plain["level"] == "info" and plain["logger"] == "stepwise.test.jsonlog"
    assert all(plain[field] is None for field in CONTEXT_FIELDS) and plain["ts"].endswith("+00:00")
    assert retry["job_id"] == "7-abc" and retry["delivery_id"] == "d-1" and retry["delay_s"] == 5.0
    assert retry["code"] == "github_5xx" and retry["level"] == "warning"


def test_bound_context_reaches_every_record_and_extra_wins(
        captured: tuple[logging.Logger, io.StringIO]) -> None:
    logger, stream = captured
    with bind(delivery_id="d-9", repo="octo-org/widgets", issue=3, event="issue_comment"):
        logger.info("handled")
        with bind(job_id="3-x", batch=2):
            logger.info("batch", extra={"batch": 4})
    logger.info("after")
    handled, batch, after = lines(stream)
    assert (handled["delivery_id"], handled["repo"], handled["issue"], handled["event"]) == (
        "d-9", "octo-org/widgets", 3, "issue_comment")
    assert batch["job_id"] == "3-x" and batch["batch"] == 4 and batch["repo"] == "octo-org/widgets"
    assert after["repo"] is None


def test_worker_tasks_bind_their_payloads_ids(captured: tuple[logging.Logger, io.StringIO]) -> None:
    logger, stream = captured
    table = with_log_context({
        "event": lambda payload: logger.info("event"),
        "revert": lambda payload: logger.info("revert"),
    })
    table["event"]({"kind": "comment", "delivery_id": "d-2", "repo": "o/r", "number": 5})
    table["revert"]({"job_id": "5-y", "batch": 3, "comment_id": 11})
    event, revert = lines(stream)
    assert (event["delivery_id"], event["repo"], event["issue"], event["event"]) == (
        "d-2", "o/r", 5, "comment")
    assert event["task"] == "event" and revert["task"] == "revert"
    assert (revert["job_id"], revert["batch"]) == ("5-y", 3)


def test_no_secret_is_logged(captured: tuple[logging.Logger, io.StringIO]) -> None:
    logger, stream = captured
    with bind(repo=f"https://x-access-token:{GH_TOKEN}@github.com/o/r"):
        logger.info("pushing with %s", GH_TOKEN, extra={"argv": ["git", "-c", GH_TOKEN],
                                                        "nested": {"auth": GH_TOKEN}})
        try:
            raise RuntimeError(f"failed with {GH_TOKEN}")
        except RuntimeError:
            logger.exception("boom")
    text = stream.getvalue()
    assert GH_TOKEN not in text and REDACTED in text
    assert lines(stream)[1]["exc"].startswith("Traceback")


def test_uvicorn_can_write_json_lines() -> None:
    config = json_uvicorn_config(uvicorn_log_config())
    assert config["formatters"] and all(f == {"()": JsonFormatter}
                                        for f in config["formatters"].values())
    assert all("redact" in h["filters"] for h in config["handlers"].values())
    access = logging.makeLogRecord({
        "name": "uvicorn.access", "levelno": logging.INFO, "levelname": "INFO",
        "msg": '%s - "%s %s HTTP/%s" %d', "args": ("127.0.0.1:5000", "GET", "/jobs", "1.1", 200),
        "color_message": "\x1b[1mGET\x1b[0m"})
    line = json.loads(JsonFormatter().format(access))
    assert line["message"] == '127.0.0.1:5000 - "GET /jobs HTTP/1.1" 200'
    assert "color_message" not in line
