"""The reading tools: `list_files`, `search` and `read_file` over the tracked files in scope.

`search` runs a pattern the model chose, so it runs under a deadline (the `regex` engine's
`timeout`: Python's `re` cannot be interrupted, and `(a+)+$` on a long line backtracks for
hours) over lines cut at MAX_LINE_CHARS (a minified file's one line is the same hazard).
"""

from __future__ import annotations

import time
from collections import Counter

import regex

from jobs.recipes.llm.tools.scope import Scope, ToolFailure, clean_path

MAX_LISTED = 300
MAX_HITS = 50
MAX_HIT_CHARS = 200
MAX_SEARCHED_BYTES = 2_000_000
MAX_LINE_CHARS = 4_000  # each line is searched up to here
SEARCH_SECONDS = 3.0  # one search, all files together
RANGE_CAP = 2_000
TAIL_CAP = 1_000
WHOLE_LIMIT = 4_000
EDGE = 2_000  # lines shown at each end of a file longer than WHOLE_LIMIT


def numbered(lines: list[str], first: int) -> str:
    return "\n".join(f"{n:>5}| {line}" for n, line in enumerate(lines, first))


def list_files(scope: Scope, *, path: str = ".", depth: int = 2) -> str:
    directory = clean_path(path)
    files = scope.under(directory)
    if not files:
        if directory in scope.readable:
            return f"{directory} is a file (read it with read_file)"
        raise ToolFailure("no_such_directory", f"no tracked files under `{directory}`; "
                          "list `.` to see the repository's top level")
    depth = max(1, depth)
    base = 0 if directory == "." else len(directory.split("/"))
    shown: list[str] = []
    folded: Counter[str] = Counter()
    for file in files:
        parts = file.split("/")
        if len(parts) - base <= depth:
            shown.append(file)
        else:
            folded["/".join(parts[:base + depth]) + "/"] += 1
    entries = sorted([*shown, *(f"{d} ({n} files)" for d, n in folded.items())])
    head = f"{len(files)} tracked file(s) under {directory}:"
    if len(entries) > MAX_LISTED:
        rest = len(entries) - MAX_LISTED
        entries = [*entries[:MAX_LISTED], f"… {rest} more entries: list a subdirectory"]
    return "\n".join([head, *entries])


def search(scope: Scope, *, pattern: str, path: str = ".") -> str:
    try:
        compiled = regex.compile(pattern, flags=regex.VERSION0)
    except (regex.error, ValueError, OverflowError) as exc:
        raise ToolFailure("bad_pattern", f"`{pattern}` is not a valid regular expression "
                          f"({exc}); escape special characters like `(` as `\\(`") from None
    where = clean_path(path)
    files = [where] if where in scope.readable else scope.under(where)
    if not files:
        raise ToolFailure("no_such_file", f"nothing tracked at `{where}` to search; use "
                          "list_files to see the files")
    hits: list[str] = []
    total = 0
    matched_files: set[str] = set()
    deadline = time.monotonic() + SEARCH_SECONDS
    for file in files:
        try:
            text = scope.read_text(file)
        except ToolFailure:
            continue
        if len(text) > MAX_SEARCHED_BYTES:
            continue
        for number, line in enumerate(text.splitlines(), 1):
            if _matches(compiled, line[:MAX_LINE_CHARS], deadline, pattern):
                total += 1
                matched_files.add(file)
                if len(hits) < MAX_HITS:
                    hits.append(f"{file}:{number}: {line.strip()[:MAX_HIT_CHARS]}")
    if not total:
        return f"no match for `{pattern}` in {len(files)} file(s) under {where}"
    lines = [f"{total} match(es) in {len(matched_files)} file(s):", *hits]
    if total > len(hits):
        lines.append(f"… {total - len(hits)} more matches: narrow the pattern or the path")
    return "\n".join(lines)


def _matches(compiled: regex.Pattern[str], line: str, deadline: float, pattern: str) -> bool:
    try:
        return compiled.search(line, timeout=max(0.0, deadline - time.monotonic())) is not None
    except TimeoutError:
        raise ToolFailure("pattern_too_slow", f"`{pattern}` took more than {SEARCH_SECONDS:g} s "
                          "(nested repetition such as `(a+)+` backtracks without end); search "
                          "for a plain word or a simpler pattern, or narrow the path") from None


def read_file(scope: Scope, *, path: str, start_line: int | None = None,
              end_line: int | None = None, tail: int | None = None) -> str:
    name = scope.readable_path(path)
    lines = scope.read_text(name).splitlines()
    total = len(lines)
    if total == 0:
        return f"{name} is empty"
    if tail is not None:
        if tail < 1:
            raise ToolFailure("bad_range", "`tail` must be at least 1")
        count = min(tail, TAIL_CAP, total)
        capped = f" (tail is capped at {TAIL_CAP:,})" if tail > TAIL_CAP else ""
        first = total - count + 1
        return f"{name} ({total} lines), last {count} lines{capped}:\n" + \
            numbered(lines[first - 1:], first)
    if start_line is None and end_line is None:
        if total <= WHOLE_LIMIT:
            return f"{name} ({total} lines):\n" + numbered(lines, 1)
        left_out = f"[lines {EDGE + 1}–{total - EDGE} left out: read them with start_line " \
                   f"and end_line, up to {RANGE_CAP:,} lines at a time]"
        return (f"{name} ({total} lines; lines {EDGE + 1}–{total - EDGE} left out):\n"
                + numbered(lines[:EDGE], 1) + f"\n{left_out}\n"
                + numbered(lines[total - EDGE:], total - EDGE + 1))
    start = 1 if start_line is None else start_line
    if start < 1 or start > total:
        raise ToolFailure("bad_range", f"start_line {start} is outside {name}, which has "
                          f"{total} lines")
    end = min(total, start + RANGE_CAP - 1) if end_line is None else end_line
    if end < start:
        raise ToolFailure("bad_range", f"end_line {end} is before start_line {start}")
    note = ""
    if end - start + 1 > RANGE_CAP:
        end = start + RANGE_CAP - 1
        note = f" (capped at {RANGE_CAP:,} lines; continue from line {end + 1})"
    end = min(end, total)
    return f"{name} ({total} lines), lines {start}–{end}{note}:\n" + \
        numbered(lines[start - 1:end], start)
