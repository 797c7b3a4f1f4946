"""`/stepwise cancel`: cancel the job."""

from bot.commands.parser import ArgumentRule, CommandSpec

# Argument: none; trailing text makes the command invalid rather than being ignored.
SPEC = CommandSpec(
    verb="cancel",
    usage="cancel",
    summary="queued job: cancelled at once; running: stop at the next safe point",
    argument=ArgumentRule.NONE,
)

# The handler, `handle(...)`, goes here beside SPEC when the dispatcher is added.
