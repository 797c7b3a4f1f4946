"""Which lines of a long command output to keep as its tail: the failing test's report rather
than whatever came last (a coverage table, a timing summary). Pure: the lines in, the tail out.

Anchors, in the order test runners print them: pytest's `FAILURES`/`ERRORS` section (before
pytest-cov's coverage table), unittest's `FAIL:`/`ERROR:` blocks, mocha's `N failing`, jest's
`●` blocks, ava's `✘`, go test's `--- FAIL:`, cargo test's `failures:`. The tail is the report
from its first anchor, a marker of what was left out, and the output's last lines (the counts).
"""

from __future__ import annotations

import re

END_LINES = 6  # the last lines are always kept: the runner's counts ("1 failed, 20 passed")

_ANCHORS = re.compile(
    r"^(?:"
    r"=+ (?:FAILURES|ERRORS) =+"  # pytest
    r"|(?:FAIL|ERROR): \S.*"  # unittest
    r"|\s*\d+ failing\b.*"  # mocha
    r"|\s*● (?!Console\b).+"  # jest (not its console.log blocks)
    r"|\s*✘ .+"  # ava
    r"|\s*--- FAIL: .+"  # go test
    r"|failures:\s*"  # cargo test
    r")$")


def left_out_marker(count: int) -> str:
    return f"… {count} line{'' if count == 1 else 's'} left out …"


def choose_tail(lines: list[str], *, limit: int) -> list[str]:
    """At most `limit` lines (+1 marker) of `lines`: from the first failure report on, then the
    last END_LINES; the plain last `limit` lines when no report is found or all fits."""
    if len(lines) <= limit:
        return lines
    anchor = next((i for i, line in enumerate(lines) if _ANCHORS.match(line)), None)
    if anchor is None or anchor >= len(lines) - limit:
        return lines[-limit:]
    head = lines[anchor : anchor + limit - END_LINES]
    end = lines[-END_LINES:]
    skipped = len(lines) - END_LINES - (anchor + len(head))
    return head + ([left_out_marker(skipped)] if skipped > 0 else []) + end
