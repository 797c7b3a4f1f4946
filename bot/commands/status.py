"""`/stepwise status`: reply with the progress card."""

from __future__ import annotations

from bot.commands.spec import Access, ArgumentRule, Command, CommandContext, CommandSpec
from jobs.domain.model import Job


def handle(context: CommandContext, job: Job | None, command: Command) -> str:
    assert job is not None  # needs_job
    return context.card(job)


# Argument: none; trailing text makes the command invalid rather than being ignored.
SPEC = CommandSpec(
    verb="status",
    usage="status",
    summary="reply with the progress card",
    argument=ArgumentRule.NONE,
    handle=handle,
    access=Access.ANYONE,
)
