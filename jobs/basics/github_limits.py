"""GitHub's documented limits, in one place, and the one way Stepwise fits a text into them (pure).

GitHub answers 422 past these, and a 422 never turns into a success by trying again, so every
renderer that sends text to GitHub goes through `fit_chars` (comment, issue and pull request
bodies, counted in characters) or `fit_bytes` (check-run output, counted in UTF-8 bytes). A text
too long keeps its head and its command lines (what the maintainer types), says how much was left
out, and points to where the whole text is.
"""

from __future__ import annotations

import re
from collections.abc import Callable

BODY_CHARS = 65_536  # issue, pull request and comment bodies (characters)
CHECK_OUTPUT_BYTES = 65_535  # check-run output title, summary and text (UTF-8 bytes, not characters)
CHECK_TITLE_CHARS = 255  # what the job's run shows as its title line; the rest is in the summary
ANNOTATIONS_PER_REQUEST = 50  # a check-run create or update carries at most this many annotations
ANNOTATIONS_PER_RUN = 1_000  # Stepwise's own bound per run (20 requests), not GitHub's
ISSUE_TITLE_CHARS = 256  # issue and pull request titles
LABEL_NAME_CHARS = 50  # label names
LABEL_DESCRIPTION_CHARS = 100
BLOB_BYTES = 100 * 1024 * 1024  # one file's content (GitHub refuses pushes and blobs over 100 MiB)
CHECK_NAME_CHARS = 255  # the fake's bound for check-run names (GitHub documents none smaller)

# A line a maintainer acts on: it shows a command in backticks ("To continue: `/stepwise approve`").
_COMMAND_LINE = re.compile(r"(?:`|^\s*)(?:/stepwise|@[\w-]+)\s+[a-z]+")
_FENCE = re.compile(r"^\s*(```+|~~~+)")


def is_command_line(line: str) -> bool:
    return bool(_COMMAND_LINE.search(line))


def utf8_len(text: str) -> int:
    return len(text.encode("utf-8"))


def fit_chars(text: str, limit: int = BODY_CHARS, *, where: str = "", reserve: int = 0) -> str:
    """`text` within `limit - reserve` characters (GitHub counts bodies in characters)."""
    return _fit(text, limit - reserve, len, where)


def fit_bytes(text: str, limit: int = CHECK_OUTPUT_BYTES, *, where: str = "") -> str:
    """`text` within `limit` UTF-8 bytes (GitHub counts check-run output in bytes)."""
    return _fit(text, limit, utf8_len, where)


def cut_chars(text: str, limit: int) -> str:
    """A one-line field (a title, a label) cut to `limit` characters, with an ellipsis when cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def fit_title(head: str, suffix: str = "", limit: int = ISSUE_TITLE_CHARS) -> str:
    """An issue or pull request title within GitHub's limit: `head` cut (with an ellipsis) so
    that the whole of `suffix` (" (#12345)": a number of any length) still fits after it."""
    return cut_chars(head, limit - len(suffix)) + suffix


def cut_bytes(text: str, limit: int) -> str:
    """A one-line field cut to `limit` UTF-8 bytes without splitting a character."""
    if utf8_len(text) <= limit:
        return text
    return text.encode("utf-8")[: limit - 3].decode("utf-8", errors="ignore") + "…"


def _fit(text: str, limit: int, size: Callable[[str], int], where: str) -> str:
    if size(text) <= limit:
        return text
    lines = text.split("\n")
    commands = [line for line in lines if is_command_line(line)]
    command_block = "\n\n".join(commands)
    while commands and size(command_block) > limit // 2:  # a pathological text of commands
        commands.pop(0)
        command_block = "\n\n".join(commands)
    pointer = f" The whole text is in {where}." if where else ""
    kept: list[str] = []
    used = 0
    budget = limit - size(command_block) - 400 - size(pointer)  # room for the notice and fences
    for line in lines:
        cost = size(line) + 1
        if used + cost > budget:
            break
        kept.append(line)
        used += cost
    if not kept and budget > 0:  # one enormous first line: keep its start
        kept = [_prefix(lines[0], budget, size)]
    left_lines = len(lines) - len(kept)
    left_size = size(text) - size("\n".join(kept))
    unit = "bytes" if size is utf8_len else "characters"
    if _open_fence(kept):
        kept.append(_open_fence(kept) or "```")
    notice = (f"✂️ Too long for GitHub: {left_lines} more lines ({left_size:,} {unit}) were left out "
              f"here.{pointer}")
    parts = ["\n".join(kept).rstrip(), notice]
    if commands:
        parts.append(command_block)
    fitted = "\n\n".join(parts)
    return fitted if size(fitted) <= limit else _prefix(fitted, limit, size)


def _open_fence(lines: list[str]) -> str | None:
    """The fence a cut left open (to close it), or None."""
    open_fence: str | None = None
    for line in lines:
        match = _FENCE.match(line)
        if match is None:
            continue
        if open_fence is None:
            open_fence = match.group(1)
        elif match.group(1).startswith(open_fence[0]) and len(match.group(1)) >= len(open_fence):
            open_fence = None
    return open_fence


def _prefix(text: str, limit: int, size: Callable[[str], int]) -> str:
    if size is len:
        return text[:limit]
    return text.encode("utf-8")[:limit].decode("utf-8", errors="ignore")
