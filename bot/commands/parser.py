"""Finds `/stepwise <verb>` commands in a comment: line-anchored, blind to quotes, code and HTML comments."""

from __future__ import annotations

import difflib
import re
from bisect import bisect_left
from functools import lru_cache
from typing import NamedTuple

from bot.commands.registry import COMMANDS, spec_for
from bot.commands.spec import (
    PREFIX,
    ArgumentRule,
    Command,
    CommandSpec,
    InvalidCommand,
    ParsedCommand,
    UnknownCommand,
)

MAX_BODY_BYTES = 64 * 1024  # a longer body is cut to this, and the line the cut falls in is dropped
MAX_COMMANDS = 10  # results (commands, unknown and invalid ones) returned per comment; the rest are dropped
MAX_ARGUMENT_LENGTH = 1000  # characters; a longer argument makes the command invalid
MAX_WORD_LENGTH = 40  # an unknown word longer than this is shortened (with "…") and gets no suggestion

NO_ARGUMENT_PROBLEM = "`{prefix} {verb}` takes no argument: put it alone on its line, and remarks on another"
MISSING_ARGUMENT_PROBLEM = "`{prefix} {verb}` needs {placeholder}: `{prefix} {usage}`"
BAD_BATCH_PROBLEM = "`{prefix} {verb}` needs a batch number (1, 2, …) and nothing else: `{prefix} {verb} 3`"
TOO_LONG_PROBLEM = "the text after `{prefix} {verb}` is longer than {limit} characters"


class _Fence(NamedTuple):
    char: str
    length: int
    column: int


_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_QUOTE = re.compile(r" {0,3}>")
# Openers are recognised at any indentation and after list markers: seeing code where there is none
# only hides a command, while missing a fence (e.g. one inside a list item) would expose its lines.
_LIST_MARKER = r"(?:[-*+]|[0-9]{1,9}[.)])[ \t]+"
_FENCE_OPEN = re.compile(rf"(?P<lead>[ \t]*(?:{_LIST_MARKER})*)(?P<fence>`{{3,}}|~{{3,}})(?P<info>.*)")
_FENCE_CLOSE = re.compile(r"(?P<indent>[ \t]*)(?P<fence>`+|~+)[ \t]*")
_BACKTICKS = re.compile(r"`+")
_BATCH_NUMBER = re.compile(r"0*[1-9][0-9]{0,8}")
_SLUG = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]*")


def parse_comment(body: str, *, app_slug: str) -> list[ParsedCommand]:
    """The commands in a comment body, in order, at most `MAX_COMMANDS` of them."""
    prefix = _prefix_pattern(app_slug)
    verbs = [spec.verb for spec in COMMANDS]
    results: list[ParsedCommand] = []
    for number, raw, visible in _candidate_lines(_limit(body)):
        match = prefix.match(visible)
        if match is None:
            continue
        word, argument = [*visible[match.end() :].split(None, 1), "", ""][:2]
        argument = argument.strip()
        spec = spec_for(word) if word else None
        if spec is None:
            results.append(_unknown(word, number, raw, verbs))
        elif problem := argument_problem(spec, argument):
            results.append(InvalidCommand(verb=spec.verb, problem=problem, line=number, raw=raw))
        else:
            results.append(Command(verb=spec.verb, argument=argument, line=number, raw=raw))
        if len(results) == MAX_COMMANDS:
            break
    return results


def argument_problem(spec: CommandSpec, argument: str) -> str | None:
    """Why `argument` does not suit `spec`'s rule, as a user-facing sentence; None when it does."""
    names = {"prefix": PREFIX, "verb": spec.verb, "usage": spec.usage, "placeholder": spec.placeholder}
    if len(argument) > MAX_ARGUMENT_LENGTH:
        return TOO_LONG_PROBLEM.format(limit=MAX_ARGUMENT_LENGTH, **names)
    if spec.argument is ArgumentRule.NONE and argument:
        return NO_ARGUMENT_PROBLEM.format(**names)
    needs_one = spec.argument in (ArgumentRule.REQUIRED_TEXT, ArgumentRule.BATCH_NUMBER)
    if needs_one and not argument:
        return MISSING_ARGUMENT_PROBLEM.format(**names)
    if spec.argument is ArgumentRule.BATCH_NUMBER and not _BATCH_NUMBER.fullmatch(argument):
        return BAD_BATCH_PROBLEM.format(**names)
    return None


def _unknown(word: str, number: int, raw: str, verbs: list[str]) -> UnknownCommand:
    if len(word) > MAX_WORD_LENGTH:
        return UnknownCommand(word=word[:MAX_WORD_LENGTH] + "…", line=number, raw=raw, suggestion=None)
    close = difflib.get_close_matches(word.lower(), verbs, n=1) if word else []
    return UnknownCommand(word=word, line=number, raw=raw, suggestion=close[0] if close else None)


@lru_cache(maxsize=16)
def _prefix_pattern(app_slug: str) -> re.Pattern[str]:
    if not _SLUG.fullmatch(app_slug):
        raise ValueError(f"app_slug must be the App's slug, like 'stepwise-bot', not {app_slug!r}")
    mention = rf"@{re.escape(app_slug)}(?:\[bot\])?"
    return re.compile(rf" {{0,3}}(?:{re.escape(PREFIX)}|{mention})(?=\s|$)", re.IGNORECASE)


def _limit(body: str) -> str:
    """The body cut to MAX_BODY_BYTES of UTF-8, without the line the cut falls in."""
    head = body[:MAX_BODY_BYTES]
    encoded = head.encode("utf-8", "surrogatepass")
    if len(head) == len(body) and len(encoded) <= MAX_BODY_BYTES:
        return body
    text = encoded[:MAX_BODY_BYTES].decode("utf-8", "ignore")
    return text[: max(text.rfind("\n"), text.rfind("\r"), 0)]


def _candidate_lines(text: str) -> list[tuple[int, str, str]]:
    """(line number, raw line, line without HTML comments) for each line that may hold a command."""
    found: list[tuple[int, str, str]] = []
    fence: _Fence | None = None
    in_comment = False
    for number, line in enumerate(_LINE_BREAK.split(text), start=1):
        if fence is not None:
            if _closes(fence, line):
                fence = None
            continue
        if in_comment:  # the line starts inside an HTML comment
            _, in_comment = _hide_comments(line, in_comment=True)
            continue
        fence = _opening_fence(line)
        if fence is not None:
            continue
        visible, in_comment = _hide_comments(line, in_comment=False)
        if _QUOTE.match(line) or line.lstrip(" ").startswith("<!--"):
            continue
        found.append((number, line, visible))
    return found


def _opening_fence(line: str) -> _Fence | None:
    match = _FENCE_OPEN.match(line)
    if match is None or (match["fence"][0] == "`" and "`" in match["info"]):
        return None  # backticks in a backtick fence's info string make it inline code
    return _Fence(char=match["fence"][0], length=len(match["fence"]), column=_columns(match["lead"]))


def _closes(fence: _Fence, line: str) -> bool:
    match = _FENCE_CLOSE.fullmatch(line)
    return (
        match is not None
        and match["fence"][0] == fence.char
        and len(match["fence"]) >= fence.length
        and _columns(match["indent"]) <= max(fence.column, 3)
    )


def _columns(lead: str) -> int:
    column = 0
    for char in lead:
        column = column + 4 - column % 4 if char == "\t" else column + 1
    return column


def _hide_comments(line: str, *, in_comment: bool) -> tuple[str, bool]:
    """The line without its HTML comments, and whether a comment is still open at its end.

    `<!--` inside an inline code span is literal. Linear in the line's length, whatever it holds.
    """
    if not in_comment and "<!--" not in line:
        return line, False
    pos = 0
    if in_comment:
        end = line.find("-->")
        if end < 0:
            return "", True
        pos = end + 3
    runs = [(m.start(), m.end()) for m in _BACKTICKS.finditer(line)]
    partner = _partners(runs)
    kept: list[str] = []
    keep_from = pos
    index = bisect_left(runs, (pos, -1))
    while (opening := line.find("<!--", pos)) >= 0:
        inside_code = False
        while index < len(runs) and runs[index][0] < opening:
            other = partner[index]
            if other < 0:  # an unmatched backtick string is literal
                index += 1
                continue
            index = other + 1
            if runs[other][1] > opening:
                pos, inside_code = runs[other][1], True
                break
        if inside_code:
            continue
        kept.append(line[keep_from:opening])
        end = line.find("-->", opening + 2)  # `<!-->` and `<!--->` are complete comments
        if end < 0:
            return "".join(kept), True
        pos = keep_from = end + 3
        index = bisect_left(runs, (pos, -1))
    kept.append(line[keep_from:])
    return "".join(kept), False


def _partners(runs: list[tuple[int, int]]) -> list[int]:
    """For each backtick string, the index of the next one of the same length (-1 if none)."""
    partner = [-1] * len(runs)
    last: dict[int, int] = {}
    for index in range(len(runs) - 1, -1, -1):
        length = runs[index][1] - runs[index][0]
        partner[index] = last.get(length, -1)
        last[length] = index
    return partner
