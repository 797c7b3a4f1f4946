"""The tools offered to the model (names and arguments are the contract in DESIGN.md), and the
checking of the arguments it sends."""

from __future__ import annotations

import json
from typing import Any

from jobs.recipes.llm.tools.scope import ToolFailure

READ_TOOLS = ("list_files", "outline", "search", "read_file")
EDIT_TOOLS = ("edit_file", "write_file")
REASON = {"type": "string",
          "description": "one line: why this edit (kept in the decision log)"}


def _function(name: str, description: str, properties: dict[str, Any],
              required: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"type": "function", "function": {
        "name": name, "description": description,
        "parameters": {"type": "object", "properties": properties,
                       "required": list(required), "additionalProperties": False}}}


def _text(description: str) -> dict[str, str]:
    return {"type": "string", "description": description}


def _number(description: str) -> dict[str, str]:
    return {"type": "integer", "description": description}


TOOLS: list[dict[str, Any]] = [
    _function("list_files", "The repository's tracked files under a directory.",
              {"path": _text('directory relative to the repository root (default ".")'),
               "depth": _number("directory levels shown (default 2)")}),
    _function("outline", "A file's top-level signatures and docstrings (Python, JS/TS).",
              {"path": _text("file path relative to the repository root")}, ("path",)),
    _function("search", "Lines matching a regular expression in the tracked files.",
              {"pattern": _text("a Python regular expression"),
               "path": _text('a file or directory to search (default ".")')}, ("pattern",)),
    _function("read_file", "A file's numbered lines (up to 2,000 at a time; the numbers and "
              "`| ` are not part of the text).",
              {"path": _text("file path relative to the repository root"),
               "start_line": _number("first line (1-based)"),
               "end_line": _number("last line (inclusive)"),
               "tail": _number("only the last N lines (up to 1,000)")}, ("path",)),
    _function("edit_file", "Replace old_text, which must occur exactly once in the file, with "
              "new_text. Only the batch's files may be changed.",
              {"path": _text("one of the batch's files"),
               "old_text": _text("text copied exactly from the file (no line numbers)"),
               "new_text": _text("its replacement"), "reason": REASON},
              ("path", "old_text", "new_text")),
    _function("write_file", "Write a batch file's whole content (or append a chunk).",
              {"path": _text("one of the batch's files"),
               "content": _text("the new content"),
               "append": {"type": "boolean", "description": "append instead of replacing"},
               "reason": REASON}, ("path", "content")),
    _function("run_checks", "Run the repository's guard, validation commands and completion "
              "check on the files as they are now (costs time: use it when an edit is done).",
              {}),
    _function("finish", "Hand the batch in. Stepwise checks it; if a check fails you are told "
              "why and continue.",
              {"summary": _text("what changed, one line per changed file: `path: what changed`")},
              ("summary",)),
]
NAMES = tuple(tool["function"]["name"] for tool in TOOLS)
_PROPERTIES = {tool["function"]["name"]: tool["function"]["parameters"] for tool in TOOLS}


def parse_arguments(name: str, raw: str) -> dict[str, Any]:
    """The call's arguments, checked against its schema; ToolFailure (soft) says what is wrong."""
    if name not in _PROPERTIES:
        raise ToolFailure("unknown_tool", f"there is no tool `{name}`; the tools are "
                          f"{', '.join(NAMES)}")
    try:
        arguments = json.loads(raw or "{}")
    except json.JSONDecodeError as exc:
        raise ToolFailure("bad_arguments", f"the arguments of `{name}` are not valid JSON "
                          f"({exc.msg} at character {exc.pos}); send a JSON object") from None
    if not isinstance(arguments, dict):
        raise ToolFailure("bad_arguments", f"the arguments of `{name}` must be a JSON object")
    schema = _PROPERTIES[name]
    properties: dict[str, Any] = schema["properties"]
    for key in schema["required"]:
        if key not in arguments:
            raise ToolFailure("bad_arguments", f"`{name}` needs `{key}`")
    checked: dict[str, Any] = {}
    for key, value in arguments.items():
        if key not in properties:
            continue  # an extra argument is ignored, not an error
        kind = properties[key]["type"]
        if value is None:
            continue
        if kind == "integer" and isinstance(value, str) and value.strip().lstrip("-").isdigit():
            value = int(value)
        if kind == "boolean" and isinstance(value, str) and value.lower() in ("true", "false"):
            value = value.lower() == "true"
        wanted = {"string": str, "integer": int, "boolean": bool}[kind]
        if not isinstance(value, wanted) or (kind == "integer" and isinstance(value, bool)):
            raise ToolFailure("bad_arguments", f"`{name}`'s `{key}` must be a {kind}")
        checked[key] = value
    return checked
