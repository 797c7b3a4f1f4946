"""An outage reads as a few lines (bot/observability/outages.py): RQ's repeated reconnect
errors and Redis warnings are written once per QUIET_S with a count of those held back; a
job's own errors and info lines always pass; stderr becomes one log record per flush."""

from __future__ import annotations

import logging

import redis

from bot.observability.outages import QUIET_S, RepeatFilter, StderrToLog


def record(name: str, level: int, msg: str, *args: object,
           exc: BaseException | None = None) -> logging.LogRecord:
    info = (type(exc), exc, None) if exc is not None else None
    return logging.LogRecord(name, level, __file__, 1, msg, args, info)


def test_repeated_outage_lines_are_held_back_and_counted() -> None:
    now = [0.0]
    quiet = RepeatFilter(clock=lambda: now[0])
    lost = redis.ConnectionError("Error 111 connecting")
    passed = [quiet.filter(record("rq.worker", logging.ERROR, "could not connect: %s", n,
                                  exc=lost)) for n in range(25)]
    assert passed == [True] + [False] * 24
    now[0] += QUIET_S + 1
    again = record("rq.worker", logging.ERROR, "could not connect: %s", 26, exc=lost)
    assert quiet.filter(again) and again.repeats == 24  # type: ignore[attr-defined]
    waits = [quiet.filter(record("bot.server.worker", logging.WARNING,
                                 "Redis does not answer; trying again in %.0f s", s))
             for s in (1, 2, 4, 8)]
    assert waits == [True, False, False, False]
    assert quiet.filter(record("rq.worker", logging.INFO, "Redis answers again"))


def test_a_jobs_own_errors_always_pass() -> None:
    quiet = RepeatFilter(clock=lambda: 0.0)
    failures = [record("bot.server.steps", logging.ERROR, "step failed for %s", job,
                       exc=ValueError("bad")) for job in ("1-a", "2-b", "3-c")]
    assert all(quiet.filter(r) for r in failures)


def test_what_reaches_stderr_is_one_log_record_per_flush(caplog: object) -> None:
    logger = logging.getLogger("stderr-test")
    stream = StderrToLog(logger)
    import pytest

    assert isinstance(caplog, pytest.LogCaptureFixture)
    with caplog.at_level(logging.ERROR, logger="stderr-test"):
        stream.write("Process Scheduler:\n")
        stream.write("Traceback (most recent call last):\n  File 'x'\n")
        stream.write("redis.exceptions.ConnectionError: Error 111\n")
        stream.flush()
        stream.flush()  # nothing more to say
    assert len(caplog.records) == 1
    assert "Process Scheduler:" in caplog.records[0].getMessage()
    assert "ConnectionError: Error 111" in caplog.records[0].getMessage()
