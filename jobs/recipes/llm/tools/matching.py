"""Finding the text an edit replaces: exactly, then (for lenient formats) ignoring whitespace;
when it is not there, the nearest region of the file with line numbers and the first difference."""

from __future__ import annotations

import re

from jobs.recipes.llm.apply import closest_region
from jobs.recipes.llm.tools.scope import ToolFailure

_NUMBERED = re.compile(r"^\s*\d+\| ?")


def without_line_numbers(text: str) -> str | None:
    """`text` with `   12| ` prefixes removed when every non-empty line has one, else None."""
    lines = text.split("\n")
    if not all(_NUMBERED.match(line) for line in lines if line.strip()):
        return None
    return "\n".join(_NUMBERED.sub("", line, count=1) for line in lines)


def _line_offsets(text: str) -> list[int]:
    offsets, position = [], 0
    for line in text.splitlines(keepends=True):
        offsets.append(position)
        position += len(line)
    offsets.append(position)
    return offsets


def _loose_span(text: str, old: str) -> list[tuple[int, int]]:
    """Character spans of whole-line regions equal to `old` line by line, ignoring whitespace."""
    want = [" ".join(line.split()) for line in old.strip("\n").split("\n")]
    lines = text.splitlines()
    have = [" ".join(line.split()) for line in lines]
    offsets = _line_offsets(text)
    spans = []
    for start in range(len(have) - len(want) + 1):
        if have[start:start + len(want)] == want:
            end = start + len(want)
            stop = offsets[end] if end < len(offsets) else len(text)
            if text[:stop].endswith("\n"):
                stop -= 1
            spans.append((offsets[start], stop))
    return spans


def locate(text: str, old: str, *, path: str, lenient: bool) -> tuple[int, int, str]:
    """(start, end, how) of the one place `old` occupies in `text`; ToolFailure otherwise."""
    if not old:
        raise ToolFailure("empty_old_text", "old_text is empty; copy the lines to replace "
                          "from the file (or use write_file for the whole file)")
    candidates = [old]
    unnumbered = without_line_numbers(old)
    if unnumbered is not None:
        candidates.append(unnumbered)
    for candidate in candidates:
        count = text.count(candidate)
        if count == 1:
            start = text.index(candidate)
            how = "exact" if candidate is old else "exact once the line numbers were removed"
            return start, start + len(candidate), how
        if count > 1:
            raise ToolFailure("ambiguous_match", _ambiguous(text, candidate, count, path))
    if lenient:
        spans = _loose_span(text, candidates[-1])
        if len(spans) == 1:
            return spans[0][0], spans[0][1], "ignoring whitespace"
        if len(spans) > 1:
            raise ToolFailure("ambiguous_match", f"the text matches {len(spans)} places of "
                              f"{path} (ignoring whitespace); include more lines around it")
    raise ToolFailure("no_match", nearest(text, candidates[-1], path=path))


def _ambiguous(text: str, old: str, count: int, path: str) -> str:
    lines: list[str] = []
    position = text.find(old)
    while position >= 0 and len(lines) < 10:
        lines.append(str(text.count("\n", 0, position) + 1))
        position = text.find(old, position + 1)
    return (f"old_text occurs {count} times in {path} (at lines {', '.join(lines)}); include "
            "more surrounding lines so it matches exactly once")


def nearest(text: str, old: str, *, path: str) -> str:
    """No match: the closest region of the file, numbered, and the first difference."""
    real = text.splitlines()
    wanted = old.strip("\n").split("\n")
    if not real:
        return f"old_text is not in {path}, which is empty; use write_file"
    start, ratio = closest_region(wanted, real, 1)
    end = min(len(real), start + len(wanted))
    shown = "\n".join(f"{n:>5}| {real[n - 1]}" for n in range(start + 1, end + 1))
    parts = [f"old_text is not in {path} as written. The closest region is lines "
             f"{start + 1}–{end} ({ratio:.0%} similar):\n{shown}"]
    for offset, (want, have) in enumerate(zip(wanted, real[start:end], strict=False)):
        if want != have:
            kind = " (they differ only in whitespace)" if want.split() == have.split() else ""
            parts.append(f"First difference: old_text has `{want}` where line "
                         f"{start + offset + 1} is `{have}`{kind}.")
            break
    parts.append("Copy old_text exactly from the file (without the `   12| ` prefixes), or "
                 "read_file the region again.")
    return "\n".join(parts)
