"""Reading job records written by earlier versions: what they kept in an untyped `extra`
mapping moves to its typed field, the rest (keys nothing reads) is dropped; an ended job's
leftover gate is dropped too; the one-shot `accept_*` flags become `accepted` entries, and a
`failure` gate stored without its cause gets the one its report's code named; a campaign kept
in server mode's part moves to the job; a field whose data moved into a feature's part of the
record is read into that part."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

_FORMER_EXTRA = ("accept_review", "accept_branch_head", "pending_issue", "untrusted_spec")
_FORMER_SERVER_EXTRA = ("installation_id", "pull", "comments", "queue_position", "interruptions",
                        "transient_failures", "retry_scheduled", "rebuilt")


# Former one-shot flags -> Acceptance values (jobs/kernel/model.py).
_FORMER_FLAGS = {"accept_review": "failed_review", "accept_branch_head": "branch_head"}
# What a `failure` gate's report code meant before the gate kept its cause (FailureCause).
_FORMER_CAUSES = {"final_review_failed": "final_review", "base_merge_failed": "base_merge"}


def acceptances_from_flags(data: Any) -> Any:
    """A stored job document with its former `accept_*` booleans as `accepted` entries."""
    if not (isinstance(data, dict) and any(key in data for key in _FORMER_FLAGS)):
        return data
    data = dict(data)
    accepted = list(data.get("accepted") or [])
    for key, value in _FORMER_FLAGS.items():
        if data.pop(key, False) is True and value not in accepted:
            accepted.append(value)
    data["accepted"] = accepted
    return data


def failure_cause(data: Any) -> Any:
    """A stored gate document of kind `failure` with the cause it was opened for."""
    if not (isinstance(data, dict) and data.get("kind") == "failure" and not data.get("cause")):
        return data
    report = data.get("report")
    code = report.get("code") if isinstance(report, dict) else getattr(report, "code", None)
    cause = _FORMER_CAUSES.get(str(code)) or ("batch" if data.get("batch") is not None
                                              else "fault")
    return {**data, "cause": cause}


def fields_from_extra(data: Any) -> Any:
    """A stored job document with its former `extra` keys moved to their fields."""
    if not (isinstance(data, dict) and "extra" in data):
        return acceptances_from_flags(data)
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
    return acceptances_from_flags(data)


def part_of_from_server(data: Any) -> Any:
    """A stored job document whose campaign was kept in server mode's part (`server.part_of`)
    with it on the job itself, where both modes keep it."""
    server = data.get("server") if isinstance(data, dict) else None
    if not (isinstance(server, dict) and "part_of" in server):
        return data
    server = dict(server)
    part_of = server.pop("part_of")
    return {**data, "server": server, "part_of": data.get("part_of") or part_of}


ENDED = frozenset({"completed", "cancelled", "failed"})  # TERMINAL_JOB_STATUSES' values


def without_gate_once_ended(data: Any) -> Any:
    """A stored document of an ended job without the gate it was left at (records saved before
    ending a job cleared its gate kept it, and showed a stale "Waiting at gate")."""
    if isinstance(data, dict) and data.get("status") in ENDED and data.get("gate") is not None:
        return {**data, "gate": None}
    return data


def parts_from_fields(data: Any, former: Mapping[str, tuple[str, str]]) -> Any:
    """A stored job (batch) document with the fields that moved into a feature's part of the
    record (`former`: field -> (part key, the part's field; "": the whole part),
    jobs/kernel/record_parts.py) moved there; a part written since keeps what it holds."""
    if not (isinstance(data, dict) and any(key in data for key in former)):
        return data
    data = dict(data)
    parts = dict(data.get("parts") or {})
    for key in [key for key in data if key in former]:
        name, field = former[key]
        value = data.pop(key)
        held = parts.get(name)
        part: dict[str, Any] = dict(held) if isinstance(held, dict) else \
            held.model_dump(exclude_unset=True) if isinstance(held, BaseModel) else {}
        if field:
            part.setdefault(field, value)
        elif isinstance(value, dict):  # the former field was the whole part
            part = {**value, **part}
        parts[name] = part
    data["parts"] = parts
    return data
