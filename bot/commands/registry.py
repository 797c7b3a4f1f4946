"""The comment commands in help-table order, looked up by verb and rendered as the help table.
A new verb is one module (its SPEC and handler) and one line here (or `register` from anywhere
before comments are read, as tests/bot/commands/test_new_verb.py does)."""

from __future__ import annotations

from bot.commands import (
    approve,
    campaign,
    cancel,
    instruct,
    reload_config,
    resume,
    retry,
    retry_start,
    revert,
    skip,
    status,
)
from bot.commands import help as help_command
from bot.commands.spec import PREFIX, CommandSpec
from jobs.basics.voice import Voice, github_voice

# The order of the docs' command table (docs/reference/commands.md); `/stepwise help` and that
# table are rendered from it.
COMMANDS: list[CommandSpec] = [
    approve.SPEC,
    retry.SPEC,
    skip.SPEC,
    cancel.SPEC,
    revert.SPEC,
    instruct.SPEC,
    status.SPEC,
    help_command.SPEC,
    reload_config.SPEC,
    resume.SPEC,
    retry_start.SPEC,
    campaign.SPEC,
]
_BY_VERB = {spec.verb: spec for spec in COMMANDS}

HELP_TABLE_HEADER = "| command | effect |\n|---|---|"


def register(spec: CommandSpec) -> None:
    """Add a verb at the end of the help table; a verb is registered once."""
    if spec.verb.lower() in _BY_VERB:
        raise ValueError(f"command {spec.verb!r} is registered twice")
    COMMANDS.append(spec)
    _BY_VERB[spec.verb.lower()] = spec


def unregister(verb: str) -> None:
    """Remove a verb added by `register` (tests)."""
    spec = _BY_VERB.pop(verb.lower(), None)
    if spec is not None:
        COMMANDS.remove(spec)


def spec_for(verb: str) -> CommandSpec | None:
    """The spec of `verb` (matched case-insensitively), or None when there is no such command."""
    return _BY_VERB.get(verb.lower())


def help_table(prefix: str = PREFIX) -> str:
    """The markdown table `| command | effect |` of every command, written with `prefix`."""
    rows = (f"| `{prefix} {spec.usage}` | {spec.summary} |" for spec in COMMANDS)
    return "\n".join((HELP_TABLE_HEADER, *rows))


def voice() -> Voice:
    """How every GitHub surface writes a command: `/stepwise <verb>`, for the registered verbs."""
    return github_voice(PREFIX, frozenset(spec.verb for spec in COMMANDS))
