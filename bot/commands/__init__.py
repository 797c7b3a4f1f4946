"""Comment commands: the parser, one module per verb (its spec and handler) and their registry."""

from bot.commands.parser import MAX_ARGUMENT_LENGTH, MAX_BODY_BYTES, MAX_COMMANDS, parse_comment
from bot.commands.registry import COMMANDS, help_table, spec_for
from bot.commands.spec import (
    PREFIX,
    Access,
    ArgumentRule,
    Command,
    CommandContext,
    CommandSpec,
    InvalidCommand,
    ParsedCommand,
    UnknownCommand,
)

__all__ = [
    "COMMANDS",
    "MAX_ARGUMENT_LENGTH",
    "MAX_BODY_BYTES",
    "MAX_COMMANDS",
    "PREFIX",
    "Access",
    "ArgumentRule",
    "Command",
    "CommandContext",
    "CommandSpec",
    "InvalidCommand",
    "ParsedCommand",
    "UnknownCommand",
    "help_table",
    "parse_comment",
    "spec_for",
]
