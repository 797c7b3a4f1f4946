"""The text edit formats besides the unified diff: `search_replace` blocks (applied leniently:
exactly, then ignoring whitespace, else the nearest region as feedback) and `whole` files.

An answer in either format becomes an ordinary unified diff against the worktree, so the rounds
parse, `git apply --check`, apply and re-apply it exactly as they do a diff the model wrote.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from pathlib import Path

from jobs.adapters.safe_paths import read_regular
from jobs.recipes.llm.answer import read_answer
from jobs.recipes.llm.tools.matching import locate
from jobs.recipes.llm.tools.scope import ToolFailure

SEARCH_REPLACE = """Answer format: for each change, the file's path on its own line, then a
search/replace block, then one SUMMARY line per changed file:

pkg/module.py
<<<<<<< SEARCH
the lines to replace, copied exactly from the file (without the `   12| ` prefixes)
=======
the lines that replace them
>>>>>>> REPLACE

SUMMARY pkg/module.py: what changed in this file, in one line

- Each SEARCH must match one place of the file; include enough lines to make it unique.
- Use several small blocks rather than one large one."""

WHOLE = """Answer format: for each file you change, its path on its own line, then the whole new
file in a fenced block, then one SUMMARY line per changed file:

pkg/module.py
```
the complete new content of the file, every line of it
```

SUMMARY pkg/module.py: what changed in this file, in one line

- Send every line of the file: what you leave out is deleted."""

INSTRUCTIONS = {"search_replace": SEARCH_REPLACE, "whole": WHOLE}
_START = re.compile(r"^\s*<{5,}\s*SEARCH\s*$")
_MIDDLE = re.compile(r"^\s*={5,}\s*$")
_END = re.compile(r"^\s*>{5,}\s*REPLACE\s*$")
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})(.*)$")


@dataclass(frozen=True)
class Edits:
    diff: str | None
    problem: str = ""
    kind: str = ""  # no_edits | no_match | outside_batch
    summaries: dict[str, str] = field(default_factory=dict)


def _path_line(line: str) -> str:
    return line.strip().strip("`*#:").strip().removeprefix("./")


def _previous_path(lines: list[str], index: int) -> str:
    for back in range(index - 1, -1, -1):
        text = lines[back].strip()
        if not text or _FENCE.match(text):
            continue
        return _path_line(text)
    return ""


def search_replace_blocks(text: str) -> list[tuple[str, str, str]]:
    """(path, search, replace) of each block, in order."""
    lines = text.split("\n")
    blocks: list[tuple[str, str, str]] = []
    index = 0
    while index < len(lines):
        if not _START.match(lines[index]):
            index += 1
            continue
        path = _previous_path(lines, index)
        search: list[str] = []
        replace: list[str] = []
        target = search
        index += 1
        while index < len(lines) and not _END.match(lines[index]):
            if target is search and _MIDDLE.match(lines[index]):
                target = replace
            else:
                target.append(lines[index])
            index += 1
        blocks.append((path, "\n".join(search), "\n".join(replace)))
        index += 1
    return blocks


def whole_files(text: str) -> list[tuple[str, str]]:
    """(path, content) of each fenced block that follows a path line."""
    lines = text.split("\n")
    found: list[tuple[str, str]] = []
    index = 0
    while index < len(lines):
        opened = _FENCE.match(lines[index])
        if opened is None:
            index += 1
            continue
        fence, info = opened[1], opened[2].strip()
        named = [token for token in info.split() if "/" in token or "." in token[1:]]
        path = named[-1] if named else _previous_path(lines, index)
        body: list[str] = []
        index += 1
        while index < len(lines) and lines[index].strip() != fence:
            body.append(lines[index])
            index += 1
        found.append((_path_line(path), "\n".join(body) + "\n"))
        index += 1
    return found


def unified(path: str, old: str, new: str) -> str:
    """A unified diff git applies, files without a final newline included."""
    out = []
    for line in difflib.unified_diff(old.splitlines(keepends=True),
                                     new.splitlines(keepends=True),
                                     fromfile=f"a/{path}", tofile=f"b/{path}"):
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def read_edits(edit_format: str, text: str, worktree: Path, files: tuple[str, ...]) -> Edits:
    """The answer's edits as one diff against the files in `worktree`, or the problem."""
    summaries = read_answer(text).summaries
    originals: dict[str, str] = {}
    changed: dict[str, str] = {}

    def current(path: str) -> str:
        if path not in originals:
            originals[path] = read_regular(worktree, path).decode("utf-8")
        return changed.get(path, originals[path])

    if edit_format == "search_replace":
        blocks = search_replace_blocks(text)
        if not blocks:
            return Edits(None, "Your answer held no search/replace block. " + SEARCH_REPLACE,
                         "no_edits")
        for number, (path, search, replace) in enumerate(blocks, 1):
            if path not in files:
                return Edits(None, _outside(number, path, files), "outside_batch")
            before = current(path)
            try:
                start, end, _ = locate(before, search, path=path, lenient=True)
            except ToolFailure as failure:
                return Edits(None, f"Block {number} ({path}): {failure.message}\nSend all "
                             "your blocks again, against the original files.", "no_match")
            changed[path] = before[:start] + replace + before[end:]
    else:
        written = whole_files(text)
        if not written:
            return Edits(None, "Your answer held no file in a fenced block. " + WHOLE, "no_edits")
        for number, (path, content) in enumerate(written, 1):
            if path not in files:
                return Edits(None, _outside(number, path, files), "outside_batch")
            current(path)
            changed[path] = content
    diff = "".join(unified(p, originals[p], t) for p, t in changed.items() if t != originals[p])
    if not diff:
        return Edits(None, "Your edits change nothing; make the change the goal asks for.",
                     "unchanged")
    return Edits(diff, summaries=summaries)


def _outside(number: int, path: str, files: tuple[str, ...]) -> str:
    return (f"Edit {number} names `{path or '(no path line)'}`, which is not one of this "
            f"request's files ({', '.join(files)}). Put the file's path on the line before "
            "each block, exactly as in the request.")
