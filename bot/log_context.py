"""The context a piece of work logs with, and the trace a task carries: the same fields in the
web app and the workers (`delivery_id`, `repo`, `issue`, `job_id`, `batch`, `event`,
`trigger`), bound around the work:

    with bind(delivery_id=..., event="issues"):      # the webhook path
        log.info("queued")
    install_handlers(with_log_context(handlers(ctx)))  # every worker task binds its payload's ids

A task carries its chain's trace in its payload (`trace`: the `delivery_id` of the webhook that
started the chain and its `trigger`: `webhook`, `reconciler` or `reaper`):
`bot.plumbing.queue.enqueue` adds the trace bound where it is called (`trace_payload`) and the
task runs with it bound again (`traced`), so every step a webhook set going logs that webhook's
id, and steps a reconciler pass queued say `delivery_id: null, trigger: reconciler`.

The lines are written as JSON by bot/observability/jsonlog.py. This module imports nothing of
Stepwise, so the Redis plumbing below the web app and the workers can carry the trace.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

CONTEXT_FIELDS = ("delivery_id", "repo", "issue", "job_id", "batch", "event", "trigger")
TRACE_KEY = "trace"  # a task payload's trace: {"delivery_id": ..., "trigger": ...}
TRIGGERS = ("webhook", "reconciler", "reaper")
RECONCILED_PREFIX = "reconciled-"  # the delivery id of a command the reconciler read back
# Other spellings used by `extra=` in the code base, and in task payloads.
ALIASES = {"delivery": "delivery_id", "number": "issue"}
_context: ContextVar[dict[str, Any] | None] = ContextVar("stepwise_log_context", default=None)


@contextmanager
def bind(**fields: Any) -> Iterator[None]:
    """Add context fields to every record logged inside the block (this thread or task)."""
    current = _context.get() or {}
    token = _context.set({**current, **{ALIASES.get(k, k): v for k, v in fields.items()
                                        if v not in (None, "", 0)}})
    try:
        yield
    finally:
        _context.reset(token)


def bound() -> dict[str, Any]:
    return dict(_context.get() or {})


@contextmanager
def traced(delivery_id: str | None, trigger: str) -> Iterator[None]:
    """Bind a chain's trace: both fields are set, a null `delivery_id` included (unlike `bind`,
    which skips empty values), so what an outer block bound never leaks into it."""
    current = _context.get() or {}
    token = _context.set({**current, "delivery_id": delivery_id or None, "trigger": trigger})
    try:
        yield
    finally:
        _context.reset(token)


def current_trace() -> dict[str, Any] | None:
    """The trace bound now, as a task payload carries it; None where no chain is bound."""
    fields = _context.get() or {}
    delivery, trigger = fields.get("delivery_id"), fields.get("trigger")
    if trigger is None and not delivery:
        return None
    return {"delivery_id": delivery or None, "trigger": trigger or "webhook"}


def trace_payload(payload: dict[str, Any]) -> dict[str, Any]:
    """`payload` with the trace bound now (unless it carries one already)."""
    trace = current_trace()
    if trace is None or TRACE_KEY in payload:
        return payload
    return {**payload, TRACE_KEY: trace}


def split_trace(payload: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """(the payload without its trace, the trace or None); a malformed trace is dropped."""
    if TRACE_KEY not in payload:
        return payload, None
    rest = {k: v for k, v in payload.items() if k != TRACE_KEY}
    trace = payload[TRACE_KEY]
    if not isinstance(trace, dict) or trace.get("trigger") not in TRIGGERS:
        return rest, None
    delivery = trace.get("delivery_id")
    return rest, {"delivery_id": str(delivery)[:100] if delivery else None,
                  "trigger": trace["trigger"]}


def payload_fields(task: str, payload: Mapping[str, Any]) -> dict[str, Any]:
    """The context fields a worker task's payload carries (event payloads and job payloads)."""
    fields = {"task": task}
    for key in ("delivery_id", "repo", "number", "job_id", "batch"):
        if key in payload:
            fields[key] = payload[key]
    if task == "event" and "kind" in payload:
        fields["event"] = payload["kind"]
    if str(fields.get("delivery_id", "")).startswith(RECONCILED_PREFIX):
        del fields["delivery_id"]  # no webhook came: the reconciler read the comment back
        fields["trigger"] = "reconciler"
    return fields


def with_log_context(handlers: Mapping[str, Callable[[dict[str, Any]], None]]
                     ) -> dict[str, Callable[[dict[str, Any]], None]]:
    """Wrap a worker's task table so each task logs with its payload's ids bound."""
    def wrap(task: str, handler: Callable[[dict[str, Any]], None]
             ) -> Callable[[dict[str, Any]], None]:
        def run(payload: dict[str, Any]) -> None:
            with bind(**payload_fields(task, payload)):
                handler(payload)
        return run
    return {task: wrap(task, handler) for task, handler in handlers.items()}
