"""`/stepwise instruct <text>`: add a standing instruction for llm batches."""

from bot.commands.parser import ArgumentRule, CommandSpec

# Argument: the rest of the line is the text; it may not be empty.
SPEC = CommandSpec(
    verb="instruct",
    usage="instruct <text>",
    summary="add a standing instruction for later llm batches (kept in the record and the note)",
    argument=ArgumentRule.REQUIRED_TEXT,
)

# The handler, `handle(...)`, goes here beside SPEC when the dispatcher is added.
