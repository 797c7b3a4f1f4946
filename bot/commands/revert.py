"""`/stepwise revert <batch>`: revert one batch by its number."""

from bot.commands.parser import ArgumentRule, CommandSpec

# Argument: a positive batch number and nothing else.
SPEC = CommandSpec(
    verb="revert",
    usage="revert <batch>",
    summary="add a revert commit for that batch, mark it `reverted`",
    argument=ArgumentRule.BATCH_NUMBER,
)

# The handler, `handle(...)`, goes here beside SPEC when the dispatcher is added.
