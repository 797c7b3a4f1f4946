"""Comment commands: `spec.py` (the prefix, a command's spec, the context a handler works in),
`parser.py` (a comment's commands, read strictly: fences, quotes and limits), `registry.py` (the
commands in one table, one line each, and the help built from it), and one module per verb
holding its spec and handler.

Contract: a new command is one module here and one line in the registry; a handler decides with
the job's record and the actor's permission (bot/authz.py) and changes the record through
jobs/engine/usecases.py, never by hand.
"""

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
