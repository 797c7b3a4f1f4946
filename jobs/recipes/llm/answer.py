"""Reading a model's answer: the diff's original text, per-file summaries, and what is wrong with it.

The diff is kept exactly as the model wrote it (never re-rendered from a PatchSet): that text
is what `git apply` sees. Problems are reported with the offending line, for the next round.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from unidiff.errors import UnidiffParseError
from unidiff.patch import PatchSet

_FENCE_OPEN = re.compile(r"^ {0,3}(`{3,}|~{3,})\s*(diff|patch|udiff)?\s*$", re.IGNORECASE)
_SUMMARY = re.compile(r"^\s*(?:[-*]\s*)?SUMMARY\s+`?([^`:\s][^`:]*?)`?\s*:\s*(.+?)\s*$")
_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_HEADER_LINE = re.compile(r"^(?:diff --git |index |old mode |new mode |new file mode |deleted file mode "
                          r"|similarity index |rename from |rename to |Binary files )")


@dataclass(frozen=True)
class Answer:
    diff: str | None  # the diff text as written (newline-terminated), or None when there is none
    summaries: dict[str, str] = field(default_factory=dict)
    closed: bool = True  # the diff's fenced block was closed (an unclosed one suggests a cut)


@dataclass(frozen=True)
class DiffProblem:
    kind: str  # parse_error | no_diff
    message: str  # for the model: what is wrong, quoting the offending line
    cut_short: bool = False  # the text ends inside a hunk (a truncation, if the block is unclosed)


def _strip_prefix(path: str) -> str:
    path = path.split("\t", 1)[0].strip()
    return path[2:] if path[:2] in ("a/", "b/") else path


def read_answer(text: str) -> Answer:
    """The first ```diff block (or a bare diff) of `text`, and its SUMMARY lines."""
    lines = text.splitlines()
    summaries = {}
    for line in lines:
        match = _SUMMARY.match(line)
        if match:
            summaries[_strip_prefix(match[1])] = match[2][:300]
    for index, line in enumerate(lines):
        opened = _FENCE_OPEN.match(line)
        if opened is None:
            continue
        fence = opened[1]
        body: list[str] = []
        for inner in lines[index + 1:]:
            if inner.strip() == fence[0] * len(inner.strip()) and len(inner.strip()) >= len(fence):
                return Answer(_joined(body), summaries, closed=True)
            body.append(inner)
        return Answer(_joined(body), summaries, closed=False)
    start = next((i for i, line in enumerate(lines)
                  if line.startswith(("--- ", "diff --git "))), None)
    if start is None:
        return Answer(None, summaries)
    body = [line for line in lines[start:] if not _SUMMARY.match(line)]
    return Answer(_joined(body), summaries, closed=bool(summaries))


def _joined(lines: list[str]) -> str | None:
    text = "\n".join(lines).strip("\n")
    return text + "\n" if text.strip() else None


def diff_paths(diff: str) -> list[str]:
    """The files a diff changes (its `+++` side, or `---` for a deletion), without a/ b/."""
    paths: list[str] = []
    source = ""
    for line in diff.splitlines():
        if line.startswith("--- "):
            source = _strip_prefix(line[4:])
        elif line.startswith("+++ "):
            target = _strip_prefix(line[4:])
            path = source if target == "/dev/null" else target
            if path and path not in paths:
                paths.append(path)
    return paths


def check_structure(diff: str) -> DiffProblem | None:
    """The first structural problem of `diff` (header order, hunk line counts), or None."""
    lines = diff.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    old = new = 0
    hunk = ""
    hunks = files = 0
    expect_plus = False
    for number, line in enumerate(lines, 1):
        where = f"line {number} of your diff: `{line[:120]}`"
        if old > 0 or new > 0:
            tag = line[:1]
            following = lines[number] if number < len(lines) else ""
            if line.startswith(("diff --git ", "@@ ")) or (
                    line.startswith("--- ") and following.startswith("+++ ")):
                return DiffProblem("parse_error", f"{where} starts a new file or hunk while "
                                   f"hunk `{hunk}` still expects {old} old-file line(s) and "
                                   f"{new} new-file line(s): the counts in its `@@` header are "
                                   "larger than its lines. Make them match.")
            if tag in (" ", "") and old > 0 and new > 0:
                old, new = old - 1, new - 1
            elif tag == "-" and old > 0:
                old -= 1
            elif tag == "+" and new > 0:
                new -= 1
            elif tag == "\\":
                pass
            else:
                return DiffProblem("parse_error", f"{where} does not fit hunk `{hunk}`, which "
                                   f"still expects {old} old-file line(s) (context or `-`) and "
                                   f"{new} new-file line(s) (context or `+`). Make the counts "
                                   "in the `@@` header match the hunk's lines.")
            continue
        if expect_plus:
            if not line.startswith("+++ "):
                return DiffProblem("parse_error", f"{where} should be the `+++ b/PATH` line "
                                   "that follows `--- a/PATH`")
            expect_plus = False
            files += 1
            continue
        if line.startswith("--- "):
            expect_plus = True
        elif (match := _HUNK.match(line)) is not None:
            if files == 0:
                return DiffProblem("parse_error", f"{where} starts a hunk before any "
                                   "`--- a/PATH` / `+++ b/PATH` header")
            hunk, hunks = line.split(" @@")[0] + " @@", hunks + 1
            old = 1 if match[2] is None else int(match[2])
            new = 1 if match[4] is None else int(match[4])
        elif line.startswith("\\"):
            continue  # "\ No newline at end of file"
        elif line.startswith(("+", "-", " ")) and hunks:
            return DiffProblem("parse_error", f"{where} comes after hunk `{hunk}` is complete: "
                               "the hunk has more lines than its `@@` header counts")
        elif not (_HEADER_LINE.match(line) or not line.strip()):
            return DiffProblem("parse_error", f"{where} is not part of a unified diff (put any "
                               "explanation after the ```diff block)")
    if old > 0 or new > 0:
        return DiffProblem("parse_error", f"your diff ends inside hunk `{hunk}`, which still "
                           f"expects {old} old-file line(s) and {new} new-file line(s)",
                           cut_short=True)
    if expect_plus:
        return DiffProblem("parse_error", "your diff ends after a `--- ` line, without its "
                           "`+++ ` line", cut_short=True)
    if not hunks:
        return DiffProblem("no_diff", "your diff has no `@@` hunks")
    return None


def parse_problem(diff: str) -> DiffProblem | None:
    """`check_structure`, then unidiff itself as the authority on what is a valid diff."""
    problem = check_structure(diff)
    if problem is not None:
        return problem
    try:
        patch = PatchSet(diff)
    except UnidiffParseError as exc:
        cut = "shorter than expected" in str(exc)
        return DiffProblem("parse_error", f"your diff cannot be parsed: {exc}", cut_short=cut)
    if not len(patch):
        return DiffProblem("no_diff", "your diff names no files")
    return None
