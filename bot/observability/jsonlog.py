"""Structured logs: one JSON object per line, with the same context fields in the web app and the
workers (`delivery_id`, `repo`, `issue`, `job_id`, `batch`, `event`, `trigger`: bound around a
piece of work by bot/log_context.py, or given by a log call's `extra=`), every string redacted.

Hook it into the process's logging with `use_json_lines()` (root handlers) and
`json_uvicorn_config(config)` (uvicorn's own handlers); see README, "Task center".
"""

from __future__ import annotations

import json
import logging
import sys
import threading
import traceback
from collections.abc import Mapping
from datetime import UTC, datetime
from types import TracebackType
from typing import Any

from bot.log_context import ALIASES, CONTEXT_FIELDS, bound
from jobs.basics.redact import redact

_STANDARD = frozenset(logging.makeLogRecord({}).__dict__) | {
    "message", "asctime", "taskName", "color_message"}

def _plain(value: Any) -> Any:
    """A JSON-ready copy of `value` with every string redacted."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, bool | int | float) or value is None:
        return value
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_plain(v) for v in value]
    if isinstance(value, datetime):
        return value.isoformat()
    return redact(str(value))


class JsonFormatter(logging.Formatter):
    """`{"ts", "level", "logger", "message", <the six context fields>, ...extras, "exc"}`."""

    def format(self, record: logging.LogRecord) -> str:
        doc: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
            **dict.fromkeys(CONTEXT_FIELDS),
            **bound(),
        }
        for key, value in record.__dict__.items():
            if key not in _STANDARD and not key.startswith("_"):
                doc[ALIASES.get(key, key)] = value
        if record.exc_info:
            doc["exc"] = "".join(traceback.format_exception(*record.exc_info)).rstrip()
        elif record.exc_text:
            doc["exc"] = record.exc_text
        if record.stack_info:
            doc["stack"] = record.stack_info
        return json.dumps(_plain(doc), ensure_ascii=False)


def use_json_lines(logger: logging.Logger | None = None) -> None:
    """Give every handler of `logger` (default: the root logger) the JSON formatter. For the
    root logger, tracebacks that would bypass logging (an uncaught exception in the main thread
    or another thread) and warnings are logged too, so every line stays JSON."""
    for handler in (logger or logging.getLogger()).handlers:
        handler.setFormatter(JsonFormatter())
    if logger is None or logger is logging.getLogger():
        sys.excepthook = _log_uncaught
        threading.excepthook = _log_thread_uncaught
        logging.captureWarnings(True)


def _log_uncaught(kind: type[BaseException], value: BaseException,
                  tb: TracebackType | None) -> None:
    if issubclass(kind, KeyboardInterrupt):
        sys.__excepthook__(kind, value, tb)
        return
    logging.getLogger("stepwise").critical("uncaught exception", exc_info=(kind, value, tb))


def _log_thread_uncaught(args: threading.ExceptHookArgs) -> None:
    if args.exc_type is SystemExit:
        return
    name = args.thread.name if args.thread is not None else "?"
    logging.getLogger("stepwise").error(
        "uncaught exception in thread %s", name, extra={"thread_name": name},
        exc_info=(args.exc_type, args.exc_value or args.exc_type(), args.exc_traceback))


def json_uvicorn_config(config: dict[str, Any]) -> dict[str, Any]:
    """uvicorn's logging config (e.g. bot.observability.logs.uvicorn_log_config()) writing JSON lines."""
    config.setdefault("formatters", {})
    for name in list(config["formatters"]):
        config["formatters"][name] = {"()": JsonFormatter}
    return config


__all__ = ["JsonFormatter", "json_uvicorn_config", "use_json_lines"]
