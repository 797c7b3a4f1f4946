"""`/stepwise instruct <text>`: add a standing instruction for llm batches."""

from __future__ import annotations

from bot.commands.spec import ArgumentRule, Command, CommandContext, CommandSpec
from jobs.engine import usecases
from jobs.kernel.job import Job


def handle(context: CommandContext, job: Job | None, command: Command) -> str:
    assert job is not None  # needs_job
    usecases.instruct(context, job, command.argument)  # refused once the job has ended
    return ""


# Argument: the rest of the line is the text; it may not be empty.
SPEC = CommandSpec(
    verb="instruct",
    usage="instruct <text>",
    summary="add a standing instruction for later llm batches (kept in the record and the note)",
    argument=ArgumentRule.REQUIRED_TEXT,
    handle=handle,
)
