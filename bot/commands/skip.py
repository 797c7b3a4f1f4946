"""`/stepwise skip <reason>`: skip the paused batch, giving a reason."""

from bot.commands.parser import ArgumentRule, CommandSpec

# Argument: the rest of the line is the reason; it may not be empty.
SPEC = CommandSpec(
    verb="skip",
    usage="skip <reason>",
    summary="mark the paused batch `skipped` with the reason, go on",
    argument=ArgumentRule.REQUIRED_TEXT,
)

# The handler, `handle(...)`, goes here beside SPEC when the dispatcher is added.
