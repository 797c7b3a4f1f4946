"""The comment parser's limits (bot/commands/parser.py): at most MAX_COMMANDS results (unknown
and invalid ones count), long words shortened, large bodies cut and parsed fast, lines cut by
the limit dropped, the limit in UTF-8 bytes, and hostile bodies parsed fast."""

from __future__ import annotations

import time

import pytest

from bot.commands import MAX_BODY_BYTES, MAX_COMMANDS, UnknownCommand, parse_comment
from tests.bot.commands.parser_kit import SLUG, parse, show


def test_at_most_max_commands_are_returned_in_order() -> None:
    body = "\n".join(f"/stepwise skip reason {n}" for n in range(1, 21))
    results = parse_comment(body, app_slug=SLUG)
    assert MAX_COMMANDS == 10
    assert [r.line for r in results] == list(range(1, 11))
    assert show(results)[-1] == "skip reason 10"


def test_unknown_and_invalid_count_towards_the_limit() -> None:
    body = "/stepwise nope\n/stepwise skip\n" * 10 + "/stepwise approve"
    assert len(parse_comment(body, app_slug=SLUG)) == MAX_COMMANDS
    assert "approve" not in parse(body)


def test_long_unknown_word_is_shortened_without_suggestion() -> None:
    (result,) = parse_comment("/stepwise " + "approve" * 100, app_slug=SLUG)
    assert isinstance(result, UnknownCommand)
    assert len(result.word) == 41
    assert result.word.endswith("…")
    assert result.suggestion is None


def test_large_body_is_cut_and_fast() -> None:
    filler = "lorem ipsum dolor sit amet\n" * 8000  # about 211 KiB
    body = "/stepwise retry\n" + filler + "/stepwise approve\n"
    started = time.perf_counter()
    assert parse(body) == ["retry"]
    assert time.perf_counter() - started < 1


def test_line_cut_by_the_limit_is_dropped() -> None:
    # `/stepwise revert 12345` straddles the limit: parsing its head would revert batch 1.
    line = "/stepwise revert 12345"
    body = "x" * (MAX_BODY_BYTES - 18) + "\n" + line + "\n"
    assert parse(body) == []
    assert parse("x" * (MAX_BODY_BYTES - 40) + "\n" + line + "\n") == ["revert 12345"]


def test_limit_counts_utf8_bytes_and_survives_odd_text() -> None:
    wide = "é" * (MAX_BODY_BYTES // 2 - 10) + "\n/stepwise approve\n/stepwise retry\n"
    assert parse(wide) == ["approve"]
    assert parse("\ud800\n/stepwise approve\n" + "\udfff" * MAX_BODY_BYTES) == ["approve"]


@pytest.mark.parametrize(
    "body",
    [
        pytest.param("<!--`" * 20000, id="openers and backticks"),
        pytest.param("`" * 70000, id="one backtick run"),
        pytest.param("` " * 40000 + "<!--", id="unmatched backticks then opener"),
        pytest.param("<!---->" * 10000, id="many comments"),
        pytest.param("```\n" * 20000, id="many fences"),
        pytest.param("- " * 30000 + "```", id="deep list markers"),
        pytest.param("/stepwise " * 7000, id="prefix repeated"),
        pytest.param("/stepwise aprove\n" * 5000, id="many unknown"),
        pytest.param("> " * 30000, id="deep quote"),
    ],
)
def test_hostile_bodies_are_fast(body: str) -> None:
    started = time.perf_counter()
    results = parse_comment(body + "\n/stepwise approve", app_slug=SLUG)
    assert len(results) <= MAX_COMMANDS
    assert time.perf_counter() - started < 1
