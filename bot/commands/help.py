"""`/stepwise help`: reply with the command table."""

from __future__ import annotations

from bot.commands.spec import Access, ArgumentRule, Command, CommandContext, CommandSpec
from jobs.kernel.job import Job


def handle(context: CommandContext, job: Job | None, command: Command) -> str:
    return context.help_table()


# Argument: none; trailing text makes the command invalid rather than being ignored.
SPEC = CommandSpec(
    verb="help",
    usage="help",
    summary="reply with this table",
    argument=ArgumentRule.NONE,
    handle=handle,
    access=Access.ANYONE,
    needs_job=False,
)
