"""`/stepwise approve`: pass the open gate."""

from bot.commands.parser import ArgumentRule, CommandSpec

# Argument: none; trailing text makes the command invalid rather than being ignored.
SPEC = CommandSpec(
    verb="approve",
    usage="approve",
    summary="pass the open gate as the table says",
    argument=ArgumentRule.NONE,
)

# The handler, `handle(...)`, goes here beside SPEC when the dispatcher is added.
