"""`/stepwise help`: reply with the command table."""

from bot.commands.parser import ArgumentRule, CommandSpec

# Argument: none; trailing text makes the command invalid rather than being ignored.
SPEC = CommandSpec(
    verb="help",
    usage="help",
    summary="reply with this table",
    argument=ArgumentRule.NONE,
)

# The handler, `handle(...)`, goes here beside SPEC when the dispatcher is added.
