"""The editing tools: `edit_file` (one exact replacement) and `write_file` (whole file or an
appended chunk), on the batch's files only."""

from __future__ import annotations

from jobs.recipes.llm.tools.matching import locate
from jobs.recipes.llm.tools.scope import Scope, ToolFailure


def edit_file(scope: Scope, *, path: str, old_text: str, new_text: str) -> tuple[str, str]:
    """(the file's path, the result text) after replacing `old_text` once."""
    name = scope.writable_path(path)
    text = scope.read_text(name)
    start, end, how = locate(text, old_text, path=name, lenient=False)
    if text[start:end] == new_text:
        raise ToolFailure("no_change", "new_text equals old_text; nothing would change")
    changed = text[:start] + new_text + text[end:]
    scope.write_text(name, changed)
    line = text.count("\n", 0, start) + 1
    added = new_text.count("\n") - text[start:end].count("\n")
    note = "" if how == "exact" else f" (matched {how})"
    return name, (f"edited {name} at line {line}{note}: {len(changed.splitlines())} lines now "
                  f"({added:+d})")


def write_file(scope: Scope, *, path: str, content: str, append: bool = False) -> tuple[str, str]:
    name = scope.writable_path(path)
    if append:
        before = scope.read_text(name)
        if before and not before.endswith("\n") and content and not content.startswith("\n"):
            content = "\n" + content
        content = before + content
    elif not content.strip():
        raise ToolFailure("empty_write", f"writing an empty {name} would delete its content; "
                          "send the whole file (or use edit_file for a part)")
    scope.write_text(name, content)
    verb = "appended to" if append else "wrote"
    return name, f"{verb} {name}: {len(content.splitlines())} lines now"
