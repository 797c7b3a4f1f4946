"""Untrusted text as data in Markdown: the one helper every comment, note and check run uses.

Spec strings (`run`, `find`, `replace`, `paths`, titles), check names, paths and command output
come from issues and repositories. Put into Markdown as they are, a backtick ends a code span,
a fence line ends a code block, `<!--` hides the rest of a line, and `@team`, `#123` or a link
speaks in the App's voice. So:

- `code(text)`: an inline code span whose backtick fence is longer than any backtick run in the
  text (CommonMark), padded when the text starts or ends with a backtick or a space; inside a
  table `|` is escaped (GitHub splits cells before code spans). Line breaks, which a code span
  would turn into spaces, are shown as `⏎` so a multi-line command stays visibly whole.
- `block(text)`: a fenced block whose fence is longer than any backtick run in the content,
  so no line inside can close it.
- `text(text)`: prose, with HTML escaped and every Markdown punctuation backslash-escaped.
- Outside code, `@mention`, `#123`/`GH-123` references and bare URLs get a zero-width joiner
  after `@`, `#`, `GH-` and `:` so GitHub links nothing; inside code GitHub links nothing
  anyway.

tests/security/test_markdown_safe.py parses the output with a CommonMark parser to prove that
the visible text equals the input and that no HTML, link or mention appears.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

ZWJ = "\u200d"  # zero-width joiner: invisible, and it breaks GitHub's mention/reference patterns
NEWLINE_MARK = " ⏎ "
# A line break inside a table cell (GitHub renders it; the CLI shows each line as a row of its
# own, bot/cli/output.py): the only markup Stepwise writes there, never from untrusted text.
CELL_BREAK = "<br>"
_BACKTICK_RUN = re.compile(r"`+")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
# Punctuation that can open or close a construct inline (emphasis, strikethrough, links and
# images, code, tables, math, escapes); CommonMark lets any ASCII punctuation be escaped.
# `_` between letters or digits never opens or closes emphasis, so `old_sum` stays as it is;
# `!` only matters before `[`, which is escaped.
_INLINE = re.compile(r"([\\`*\[\]~|$]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9]))")
_LINE_START = re.compile(r"^([ \t]*)([#>+=-]|\d+[.)])")
_HTML = {"&": "&amp;", "<": "&lt;"}  # enough for no tag, comment or entity to form
_REFERENCES = (
    (re.compile(r"@(?=[A-Za-z0-9])"), "@" + ZWJ),  # @user, @org/team, a@b.example
    (re.compile(r"#(?=\d)"), "#" + ZWJ),  # #123, owner/repo#123
    (re.compile(r"(GH)-(?=\d)", re.IGNORECASE), r"\1-" + ZWJ),  # GH-123
    (re.compile(r":(?=//)"), ":" + ZWJ),  # https://...
    (re.compile(r"(www)\.", re.IGNORECASE), r"\1" + ZWJ + "."),  # www.example.com
)


def _longest_run(text: str) -> int:
    return max((len(run) for run in _BACKTICK_RUN.findall(text)), default=0)


def code(value: object, *, in_table: bool = False) -> str:
    """`value` as an inline code span that nothing inside can end."""
    content = _LINE_BREAK.sub(NEWLINE_MARK, str(value))
    if not content:
        return "` `"
    fence = "`" * (_longest_run(content) + 1)
    if content.strip(" ") and (content[0] in "` " or content[-1] in "` "):
        content = f" {content} "
    if in_table:
        content = content.replace("|", "\\|")
    return f"{fence}{content}{fence}"


def codes(values: Iterable[object], *, separator: str = ", ", in_table: bool = False) -> str:
    """Each of `values` as a code span, joined."""
    return separator.join(code(value, in_table=in_table) for value in values)


def block(value: object, *, info: str = "") -> str:
    """`value` as a fenced code block that no line inside can close (no trailing newline)."""
    content = str(value).rstrip("\n")
    fence = "`" * max(3, _longest_run(content) + 1)
    return f"{fence}{info}\n{content}\n{fence}"


def block_lines(lines: Iterable[str]) -> list[str]:
    """`lines` as a fenced block, one list item per line (for renderers that join lines)."""
    return block("\n".join(lines)).split("\n")


def neutralise(value: str) -> str:
    """Mentions, issue references and URLs made inert with a zero-width joiner."""
    for pattern, replacement in _REFERENCES:
        value = pattern.sub(replacement, value)
    return value


def _escape_inline(value: str) -> str:
    content = _INLINE.sub(r"\\\1", neutralise(value))
    return "".join(_HTML.get(char, char) for char in content)


def _edges(content: str) -> str:
    """Whitespace at either end as character references (Markdown would strip it, or make an
    indented code block of it) and a block marker at the start made literal."""
    content = _LINE_START.sub(_escape_marker, content)
    body = content.strip()
    if not body:
        return "".join(f"&#{ord(char)};" for char in content)
    start, end = content.index(body), len(content.rstrip())
    return "".join(f"&#{ord(char)};" for char in content[:start]) + body + \
        "".join(f"&#{ord(char)};" for char in content[end:])


def text(value: object) -> str:
    """`value` as literal prose on one line: HTML escaped, Markdown punctuation escaped,
    mentions, references and URLs neutralised."""
    return _edges(_escape_inline(_LINE_BREAK.sub(" ", str(value))))


def _escape_marker(match: re.Match[str]) -> str:
    """A block marker at the start of the line (`#`, `>`, `-`, `+`, `=`, `1.`) made literal."""
    marker = match[2]
    return match[1] + marker[:-1] + "\\" + marker[-1]


_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)")
_FENCE_LINE = re.compile(r" {0,3}(`{3,})[^`]*")
_BULLET = "- "


def message(value: object, *, in_table: bool = False) -> str:
    """A message Stepwise wrote around untrusted values (an error, a gate's reason, a hint):
    its code spans, fenced blocks and `- ` bullets are kept (code is inert, and a block is
    fenced again so nothing inside closes it); everything else is `text`, line by line. No
    link is kept, whatever it looks like: the message cannot tell Stepwise's words from an
    issue title or a model's summary inside it (a link of Stepwise's own is shown as code)."""
    lines, out, index = _LINE_BREAK.split(str(value)), [], 0
    while index < len(lines):
        line = lines[index]
        opening = _FENCE_LINE.fullmatch(line)
        if opening is not None:
            width = len(opening[1])
            end = next((j for j in range(index + 1, len(lines))
                        if re.fullmatch(rf" {{0,3}}`{{{width},}}\s*", lines[j])), len(lines))
            out.append(block("\n".join(lines[index + 1:end])))
            index = end + 1
            continue
        bullet = _BULLET if line.startswith(_BULLET) else ""
        out.append(bullet + _inline_message(line[len(bullet):], in_table=in_table))
        index += 1
    return "\n".join(out)


def _inline_message(line: str, *, in_table: bool) -> str:
    return _edges(_segments(line, in_table=in_table))


def _segments(line: str, *, in_table: bool) -> str:
    parts: list[str] = []
    position = 0
    for span in _CODE_SPAN.finditer(line):
        if line[position:span.start()]:
            parts.append(_escape_inline(line[position:span.start()]))
        content = span[2]  # without the one space each side CommonMark strips
        if content.startswith(" ") and content.endswith(" ") and content.strip(" "):
            content = content[1:-1]
        parts.append(code(content, in_table=in_table))
        position = span.end()
    if line[position:]:
        parts.append(_escape_inline(line[position:]))
    return "".join(parts)
