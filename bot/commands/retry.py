"""`/stepwise retry`: retry the paused batch."""

from bot.commands.parser import ArgumentRule, CommandSpec

# Argument: none; trailing text makes the command invalid rather than being ignored.
SPEC = CommandSpec(
    verb="retry",
    usage="retry",
    summary="retry the paused batch, attempts counter reset",
    argument=ArgumentRule.NONE,
)

# The handler, `handle(...)`, goes here beside SPEC when the dispatcher is added.
