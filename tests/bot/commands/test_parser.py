"""Comment command parsing (bot/commands/parser.py): tables of comments, near misses included
(prefixes, code, quotes and HTML comments, verbs and arguments, several commands), what a
result carries, the problems it explains, the app slug, and frozen results."""

from __future__ import annotations

import dataclasses

import pytest

from bot.commands import MAX_ARGUMENT_LENGTH, Command, InvalidCommand, UnknownCommand, parse_comment
from tests.bot.commands.parser_kit import SLUG, parse, show

PREFIXES = [
    ("plain", "/stepwise approve", ["approve"]),
    ("trailing newline", "/stepwise approve\n", ["approve"]),
    ("mention", "@stepwise-bot approve", ["approve"]),
    ("mention as bot login", "@stepwise-bot[bot] approve", ["approve"]),
    ("mention, any case", "@Stepwise-Bot APPROVE", ["approve"]),
    ("prefix, any case", "/STEPWISE Approve", ["approve"]),
    ("tab after prefix", "/stepwise\tapprove", ["approve"]),
    ("1 space indent", " /stepwise approve", ["approve"]),
    ("3 spaces indent", "   /stepwise approve", ["approve"]),
    ("other app", "@other approve", []),
    ("longer slug", "@stepwise-botx approve", []),
    ("slug with suffix", "@stepwise-bot-staging approve", []),
    ("mention with comma", "@stepwise-bot, approve", []),
    ("bot suffix glued", "@stepwise-bot[bot]approve", []),
    ("prefix glued to verb", "/stepwiseapprove", []),
    ("prefix with dash", "/stepwise-approve", []),
    ("prefix with slash", "/stepwise/approve", []),
    ("other prefix", "/hold", []),
    ("not at line start", "x /stepwise approve", []),
    ("mid-sentence mention", "thanks @stepwise-bot approve", []),
    ("list item", "- /stepwise approve", []),
    ("prefix alone", "/stepwise", ["unknown:->None"]),
    ("prefix alone, spaces", "/stepwise   ", ["unknown:->None"]),
    ("mention alone", "@stepwise-bot", ["unknown:->None"]),
]

CODE_AND_QUOTES = [
    ("4 spaces on first line", "    /stepwise approve", []),
    ("4 spaces after blank line", "text\n\n    /stepwise approve", []),
    ("tab indent", "\t/stepwise approve", []),
    ("quoted", "> /stepwise approve", []),
    ("quoted, no space", ">/stepwise approve", []),
    ("quoted twice", ">> /stepwise approve", []),
    ("quoted twice, spaced", "> > /stepwise approve", []),
    ("indented quote", "   > /stepwise approve", []),
    ("after a quote", "> do it\n\n/stepwise approve", ["approve"]),
    # Not a quoted line (no `>`), though Markdown renders it inside the quote: the author typed it.
    ("lazy line after a quote", "> do it\n/stepwise approve", ["approve"]),
    ("quoted fence does not hide later lines", "> ```\n/stepwise approve", ["approve"]),
    ("fenced", "```\n/stepwise approve\n```", []),
    ("fenced with info string", "```python title=x\n/stepwise approve\n```", []),
    ("tilde fence", "~~~\n/stepwise approve\n~~~", []),
    ("tilde fence with backticks in info", "~~~ `x`\n/stepwise approve\n~~~", []),
    ("after the fence closes", "```\ncode\n```\n/stepwise approve", ["approve"]),
    ("after a tilde fence closes", "~~~\n/stepwise cancel\n~~~\n/stepwise approve", ["approve"]),
    ("shorter fence does not close", "````\n```\n/stepwise approve\n````", []),
    ("longer fence closes", "```\ncode\n`````\n/stepwise approve", ["approve"]),
    ("other fence char does not close", "```\n~~~\n/stepwise approve\n```", []),
    ("closer with text is content", "```\n``` x\n/stepwise approve\n```", []),
    ("closer indented 4 is content", "```\n    ```\n/stepwise approve", []),
    ("indented fence", "  ```\n/stepwise approve\n  ```\n/stepwise retry", ["retry"]),
    ("unclosed fence hides the rest", "```\n/stepwise approve", []),
    ("fence in a list item", "- ```\n  /stepwise approve\n  ```\n/stepwise retry", ["retry"]),
    ("fence in an ordered item", "1. ```\n   /stepwise approve\n   ```", []),
    ("backticks in info: inline code", "```x```\n/stepwise approve", ["approve"]),
    ("inline code", "`/stepwise approve`", []),
    ("double-backtick inline code", "``/stepwise approve``", []),
    ("html comment", "<!-- /stepwise approve -->", []),
    ("html comment over lines", "<!--\n/stepwise approve\n-->", []),
    ("after an html comment", "<!--\n/stepwise approve\n-->\n/stepwise retry", ["retry"]),
    ("inline html comment over lines", "see <!--\n/stepwise approve\n-->", []),
    ("text after a comment on its line", "<!-- x --> /stepwise approve", []),
    ("unclosed html comment hides the rest", "<!-- x\n/stepwise approve", []),
    ("empty html comment", "<!-->\n/stepwise approve", ["approve"]),
    ("comment opener in inline code", "`<!--`\n/stepwise approve", ["approve"]),
    ("comment opener in a fence", "```\n<!--\n```\n/stepwise approve", ["approve"]),
    ("fence opener in a comment", "<!--\n```\n-->\n/stepwise approve", ["approve"]),
    ("comment removed from argument", "/stepwise skip flaky <!-- and more -->", ["skip flaky"]),
    ("comment hides the argument's end", "/stepwise skip flaky <!--\n/stepwise approve\n-->", ["skip flaky"]),
    ("backtick in a comment pairs with none", "<!-- ` --> <!-- `\n/stepwise approve\n-->", []),
]

VERBS_AND_ARGUMENTS = [
    ("approve", "/stepwise approve", ["approve"]),
    ("retry", "/stepwise retry", ["retry"]),
    ("cancel", "/stepwise cancel", ["cancel"]),
    ("status", "/stepwise status", ["status"]),
    ("help", "/stepwise help", ["help"]),
    ("skip with reason", "/stepwise skip flaky generated code", ["skip flaky generated code"]),
    ("skip reason stripped", "/stepwise skip \t flaky  code  ", ["skip flaky  code"]),
    ("skip without reason", "/stepwise skip", ["invalid:skip"]),
    ("skip with blank reason", "/stepwise skip    ", ["invalid:skip"]),
    ("revert", "/stepwise revert 3", ["revert 3"]),
    ("revert, big number", "/stepwise revert 120", ["revert 120"]),
    ("revert, leading zero", "/stepwise revert 03", ["revert 03"]),
    ("revert a word", "/stepwise revert x", ["invalid:revert"]),
    ("revert 0", "/stepwise revert 0", ["invalid:revert"]),
    ("revert negative", "/stepwise revert -1", ["invalid:revert"]),
    ("revert fraction", "/stepwise revert 3.5", ["invalid:revert"]),
    ("revert hash", "/stepwise revert #3", ["invalid:revert"]),
    ("revert two numbers", "/stepwise revert 3 4", ["invalid:revert"]),
    ("revert non-ASCII digit", "/stepwise revert \u0663", ["invalid:revert"]),
    ("revert huge", "/stepwise revert 12345678901", ["invalid:revert"]),
    ("revert without batch", "/stepwise revert", ["invalid:revert"]),
    ("instruct", "/stepwise instruct prefer pathlib", ["instruct prefer pathlib"]),
    ("instruct without text", "/stepwise instruct", ["invalid:instruct"]),
    ("approve with trailing text", "/stepwise approve but only batch 2", ["invalid:approve"]),
    ("status with trailing text", "/stepwise status please", ["invalid:status"]),
    ("verb, any case", "/stepwise SKIP Flaky", ["skip Flaky"]),
    ("misspelt", "/stepwise aprove", ["unknown:aprove->approve"]),
    ("misspelt status", "/stepwise stauts", ["unknown:stauts->status"]),
    ("punctuation", "/stepwise approve.", ["unknown:approve.->approve"]),
    ("unknown, nothing close", "/stepwise frobnicate", ["unknown:frobnicate->None"]),
    ("unknown with argument", "/stepwise hold on", ["unknown:hold->None"]),
]

SEVERAL = [
    ("two in order", "/stepwise retry\n/stepwise status", ["retry", "status"]),
    ("with prose", "Good.\n\n/stepwise approve\nthanks\n@stepwise-bot status", ["approve", "status"]),
    (
        "bad ones kept in place",
        "/stepwise aprove\n/stepwise skip\n/stepwise help",
        ["unknown:aprove->approve", "invalid:skip", "help"],
    ),
    ("repeated", "/stepwise approve\n/stepwise approve", ["approve", "approve"]),
    ("CRLF", "thanks\r\n/stepwise approve\r\n/stepwise skip flaky\r\n", ["approve", "skip flaky"]),
    ("lone CR", "thanks\r/stepwise approve", ["approve"]),
    ("CRLF fence", "```\r\n/stepwise approve\r\n```\r\n/stepwise retry", ["retry"]),
    ("empty", "", []),
    ("prose only", "LGTM, ship it", []),
]


@pytest.mark.parametrize(
    ("body", "expected"),
    [pytest.param(body, expected, id=name) for name, body, expected in PREFIXES],
)
def test_prefixes(body: str, expected: list[str]) -> None:
    assert parse(body) == expected


@pytest.mark.parametrize(
    ("body", "expected"),
    [pytest.param(body, expected, id=name) for name, body, expected in CODE_AND_QUOTES],
)
def test_code_quotes_and_html_comments(body: str, expected: list[str]) -> None:
    assert parse(body) == expected


@pytest.mark.parametrize(
    ("body", "expected"),
    [pytest.param(body, expected, id=name) for name, body, expected in VERBS_AND_ARGUMENTS],
)
def test_verbs_and_arguments(body: str, expected: list[str]) -> None:
    assert parse(body) == expected


@pytest.mark.parametrize(
    ("body", "expected"),
    [pytest.param(body, expected, id=name) for name, body, expected in SEVERAL],
)
def test_several_lines(body: str, expected: list[str]) -> None:
    assert parse(body) == expected


def test_results_carry_line_number_and_raw_line() -> None:
    body = "Hi\r\n\r\n  /stepwise Skip  flaky tests \r\n@stepwise-bot[bot] aprove\n/stepwise revert x"
    assert parse_comment(body, app_slug=SLUG) == [
        Command(verb="skip", argument="flaky tests", line=3, raw="  /stepwise Skip  flaky tests "),
        UnknownCommand(word="aprove", line=4, raw="@stepwise-bot[bot] aprove", suggestion="approve"),
        InvalidCommand(
            verb="revert",
            problem=(
                "`/stepwise revert` needs a batch number (1, 2, …) and nothing else: `/stepwise revert 3`"
            ),
            line=5,
            raw="/stepwise revert x",
        ),
    ]


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ("/stepwise skip", "`/stepwise skip` needs <reason>: `/stepwise skip <reason>`"),
        ("/stepwise instruct", "`/stepwise instruct` needs <text>: `/stepwise instruct <text>`"),
        ("/stepwise revert", "`/stepwise revert` needs <batch>: `/stepwise revert <batch>`"),
        ("/stepwise approve now", "`/stepwise approve` takes no argument"),
        ("/stepwise skip " + "x" * (MAX_ARGUMENT_LENGTH + 1), "longer than 1000 characters"),
    ],
)
def test_problems_say_how_to_write_it(body: str, needle: str) -> None:
    (result,) = parse_comment(body, app_slug=SLUG)
    assert isinstance(result, InvalidCommand)
    assert needle in result.problem


def test_argument_length_limit() -> None:
    at_limit = "x" * MAX_ARGUMENT_LENGTH
    assert parse(f"/stepwise instruct {at_limit}") == [f"instruct {at_limit}"]
    assert parse(f"/stepwise instruct {at_limit}y") == ["invalid:instruct"]


@pytest.mark.parametrize("slug", ["", "stepwise bot", "@stepwise-bot", "stepwise-bot[bot]", "x|y"])
def test_bad_slug_is_refused(slug: str) -> None:
    with pytest.raises(ValueError, match="app_slug"):
        parse_comment("/stepwise approve", app_slug=slug)


def test_slug_is_taken_literally() -> None:
    assert show(parse_comment("@a.b approve\n@a-b approve", app_slug="a-b")) == ["approve"]


def test_results_are_frozen() -> None:
    (result,) = parse_comment("/stepwise approve", app_slug=SLUG)
    assert isinstance(result, Command)
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.verb = "cancel"  # type: ignore[misc]
