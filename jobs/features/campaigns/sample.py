"""A dry-run edit of one sample file per repository for the campaign preview: what the recipe
would make of it, as a short unified diff, computed in process from the file's text at the
previewed commit (nothing is written anywhere) by the recipe's own `preview` (`replace` has
one). Other recipes show their edit in each job's plan, where a dry run in the sandbox makes it."""

from __future__ import annotations

import difflib
from collections.abc import Callable

MAX_LINES = 12  # diff lines a preview keeps; the job's plan shows the whole batch
MAX_LINE_CHARS = 160


def dry_run_diff(path: str, text: str, *, edit: Callable[[str], str]) -> str:
    """The whole unified diff `edit` makes of `text` (empty when it changes nothing)."""
    after = edit(text)
    if after == text:
        return ""
    return "\n".join(difflib.unified_diff(text.splitlines(), after.splitlines(), f"a/{path}",
                                          f"b/{path}", n=0, lineterm="")) + "\n"


def cut_diff(diff: str) -> str:
    """`diff` cut to MAX_LINES lines of at most MAX_LINE_CHARS characters each."""
    kept = [line if len(line) <= MAX_LINE_CHARS else line[:MAX_LINE_CHARS - 1] + "…"
            for line in diff.splitlines()]
    return "\n".join(kept[:MAX_LINES] + (["…"] if len(kept) > MAX_LINES else []))
