"""Reading job records written by earlier versions: what they kept in an untyped `extra`
mapping moves to its typed field, the rest (keys nothing reads) is dropped; an ended job's
leftover gate is dropped too."""

from __future__ import annotations

from typing import Any

_FORMER_EXTRA = ("accept_review", "accept_branch_head", "pending_issue", "untrusted_spec")
_FORMER_SERVER_EXTRA = ("installation_id", "pull", "comments", "queue_position", "interruptions",
                        "transient_failures", "retry_scheduled", "rebuilt")


def fields_from_extra(data: Any) -> Any:
    """A stored job document with its former `extra` keys moved to their fields."""
    if not (isinstance(data, dict) and "extra" in data):
        return data
    data = dict(data)
    extra = data.pop("extra")
    if not isinstance(extra, dict):
        return data
    for key in _FORMER_EXTRA:
        if key in extra:
            data.setdefault(key, extra[key])
    server = {key: extra[key] for key in _FORMER_SERVER_EXTRA if key in extra}
    if not isinstance(server.get("pull", {}), dict):
        del server["pull"]  # read as "no pull request" before, too
    if server and "server" not in data:
        data["server"] = server
    return data


ENDED = frozenset({"completed", "cancelled", "failed"})  # TERMINAL_JOB_STATUSES' values


def without_gate_once_ended(data: Any) -> Any:
    """A stored document of an ended job without the gate it was left at (records saved before
    ending a job cleared its gate kept it, and showed a stale "Waiting at gate")."""
    if isinstance(data, dict) and data.get("status") in ENDED and data.get("gate") is not None:
        return {**data, "gate": None}
    return data
