"""`/stepwise retry-start`: after a start that failed (a spec or config error, a plan that could
not be made), start again with the issue's text and the default branch's config as they are now,
without removing and adding the label; at the plan gate it plans again with the current config.
The start authorizes the commenter as a label would (bot/server/start_job.py)."""

from __future__ import annotations

from bot.commands.spec import Access, ArgumentRule, Command, CommandContext, CommandSpec
from jobs.kernel.job import Job


def handle(context: CommandContext, job: Job | None, command: Command) -> str:
    return context.retry_start()


# Argument: none; trailing text makes the command invalid rather than being ignored.
SPEC = CommandSpec(
    verb="retry-start",
    usage="retry-start",
    summary="after a start that failed: start again with the issue's text and the default "
            "branch's config as they are now (no need to remove and add the label)",
    argument=ArgumentRule.NONE,
    handle=handle,
    access=Access.ANYONE,  # the start checks the commenter's permission, as for a label
    needs_job=False,
)
