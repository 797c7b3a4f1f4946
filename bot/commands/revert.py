"""`/stepwise revert <batch>`: revert one batch by its number."""

from __future__ import annotations

from bot.commands.spec import ArgumentRule, Command, CommandContext, CommandSpec
from jobs.engine import usecases
from jobs.kernel.job import Job


def handle(context: CommandContext, job: Job | None, command: Command) -> str:
    assert job is not None  # needs_job
    usecases.revert(context, job, int(command.argument))
    return ""


# Argument: a positive batch number and nothing else.
SPEC = CommandSpec(
    verb="revert",
    usage="revert <batch>",
    summary="add a revert commit for that batch, mark it `reverted`",
    argument=ArgumentRule.BATCH_NUMBER,
    handle=handle,
)
