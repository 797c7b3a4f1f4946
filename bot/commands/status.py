"""`/stepwise status`: reply with the progress card."""

from bot.commands.parser import ArgumentRule, CommandSpec

# Argument: none; trailing text makes the command invalid rather than being ignored.
SPEC = CommandSpec(
    verb="status",
    usage="status",
    summary="reply with the progress card",
    argument=ArgumentRule.NONE,
)

# The handler, `handle(...)`, goes here beside SPEC when the dispatcher is added.
