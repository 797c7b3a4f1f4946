"""Compaction: when the conversation nears the context limit, older turns become one summary
that keeps every path, identifier and decision verbatim."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

KEEP_LAST = 8  # messages kept as they are after the summary
CHARS_PER_TOKEN = 4
_IDENTIFIER = re.compile(
    r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+"  # dotted: logging.getLogger, a/b.py
    r"|[A-Za-z_$]*_[\w$]+"  # snake_case, _private
    r"|[a-z]+[A-Z][\w$]*"  # camelCase
    r"|[A-Z][a-z0-9]+[A-Z][\w$]*"  # PascalCase
    r"|[\w.-]+/[\w./-]+")  # paths
MAX_IDENTIFIERS = 600
TITLE = "# Summary of earlier turns (compacted to fit the context)"


def size(messages: Sequence[dict[str, Any]]) -> int:
    """The conversation's estimated tokens."""
    chars = 0
    for message in messages:
        chars += len(str(message.get("content") or ""))
        for call in message.get("tool_calls") or []:
            chars += len(call["function"]["arguments"])
    return chars // CHARS_PER_TOKEN


def _texts(message: dict[str, Any]) -> list[str]:
    parts = [str(message.get("content") or "")]
    parts += [call["function"]["arguments"] for call in message.get("tool_calls") or []]
    return parts


def _steps(message: dict[str, Any]) -> list[str]:
    """One line per tool call of an assistant message: name and arguments, long ones cut."""
    lines = []
    for call in message.get("tool_calls") or []:
        try:
            arguments = json.loads(call["function"]["arguments"] or "{}")
        except json.JSONDecodeError:
            arguments = {"raw": call["function"]["arguments"]}
        shown = {k: (v if not isinstance(v, str) or len(v) <= 300 else v[:300] + "…")
                 for k, v in (arguments.items() if isinstance(arguments, dict) else [])}
        lines.append(f"- {call['function']['name']} {json.dumps(shown, ensure_ascii=False)}")
    return lines


def compact(messages: list[dict[str, Any]], *, keep_last: int = KEEP_LAST) -> list[dict[str, Any]]:
    """The system and first user messages, a summary of the middle, and the last turns."""
    head = messages[:2]
    cut = max(2, len(messages) - keep_last)
    while cut < len(messages) and messages[cut]["role"] != "assistant":
        cut += 1  # never separate tool results from the call that asked for them
    middle = messages[2:cut]
    if not middle:
        return messages
    steps: list[str] = []
    decisions: list[str] = []
    seen: dict[str, None] = {}
    for message in middle:
        if message["role"] == "assistant":
            steps += _steps(message)
            if str(message.get("content") or "").strip():
                decisions.append("- " + str(message["content"]).strip()[:600])
        elif str(message.get("content") or "").startswith(TITLE):  # an earlier summary
            steps += [line for line in str(message["content"]).split("\n")[2:]
                      if line.startswith(("- ", "  → "))]
        elif message["role"] == "tool":
            first = str(message.get("content") or "").split("\n", 1)[0]
            steps.append(f"  → {first[:300]}")
        for text in _texts(message):
            for found in _IDENTIFIER.findall(text):
                if len(seen) < MAX_IDENTIFIERS:
                    seen.setdefault(found.strip("."), None)
    summary = [TITLE,
               "Tool calls so far, in order, with the first line of each result:", *steps]
    if decisions:
        summary += ["", "What you said while working (verbatim):", *decisions]
    summary += ["", "Paths and identifiers seen so far (verbatim): " + ", ".join(seen),
                "", "Files may have changed since: read again what you need."]
    return [*head, {"role": "user", "content": "\n".join(summary)}, *messages[cut:]]
