"""Comment commands: the parser, one module per verb (spec, later its handler) and their registry."""

from bot.commands.parser import (
    MAX_ARGUMENT_LENGTH,
    MAX_BODY_BYTES,
    MAX_COMMANDS,
    PREFIX,
    ArgumentRule,
    Command,
    CommandSpec,
    InvalidCommand,
    ParsedCommand,
    UnknownCommand,
    parse_comment,
)
from bot.commands.registry import COMMANDS, help_table, spec_for

__all__ = [
    "COMMANDS",
    "MAX_ARGUMENT_LENGTH",
    "MAX_BODY_BYTES",
    "MAX_COMMANDS",
    "PREFIX",
    "ArgumentRule",
    "Command",
    "CommandSpec",
    "InvalidCommand",
    "ParsedCommand",
    "UnknownCommand",
    "help_table",
    "parse_comment",
    "spec_for",
]
