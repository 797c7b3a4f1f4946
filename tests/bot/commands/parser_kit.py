"""Shared parts of the comment-parser tests (no tests here): the app slug they use, and parsing
a comment into short strings (`skip flaky`, `unknown:aprove->approve`, `invalid:revert`)."""

from __future__ import annotations

from collections.abc import Sequence

from bot.commands import Command, InvalidCommand, ParsedCommand, UnknownCommand, parse_comment

SLUG = "stepwise-bot"


def show(results: Sequence[ParsedCommand]) -> list[str]:
    """Results as short strings: `skip flaky`, `unknown:aprove->approve`, `invalid:revert`."""
    shown = []
    for result in results:
        match result:
            case Command():
                shown.append(f"{result.verb} {result.argument}".rstrip())
            case UnknownCommand():
                shown.append(f"unknown:{result.word}->{result.suggestion}")
            case InvalidCommand():
                shown.append(f"invalid:{result.verb}")
    return shown


def parse(body: str) -> list[str]:
    return show(parse_comment(body, app_slug=SLUG))
