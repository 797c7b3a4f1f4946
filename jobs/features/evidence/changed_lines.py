"""The lines a batch added or changed, per file, read from its unified diff with unidiff (pure):
what the changed-line coverage is measured against and what the edit shapes group."""

from __future__ import annotations

from unidiff.errors import UnidiffParseError
from unidiff.patch import PatchSet

MAX_FILES = 2_000  # a batch's diff names at most this many files here (the guard caps it before)


def changed_lines(diff: str) -> dict[str, list[int]]:
    """Each changed text file of `diff` (not removed, not binary) with its added lines' numbers
    in the new file, in order; an unreadable diff gives nothing."""
    try:
        patch = PatchSet(diff)
    except UnidiffParseError:
        return {}
    lines: dict[str, list[int]] = {}
    for changed in list(patch)[:MAX_FILES]:
        if changed.is_removed_file or changed.is_binary_file:
            continue
        added = [line.target_line_no for hunk in changed for line in hunk
                 if line.is_added and line.target_line_no is not None]
        if added:
            lines[changed.path] = added
    return lines
