"""`/stepwise campaign <verb> ...` on a campaign issue: steer the campaign (approve a repository
or all, retry-failed, skip, pause, resume, cancel, add); the campaign checks the commenter's
permission itself, in the control repository and, for what it does to a repository's job, in
that repository (bot/server/campaigns/). Its line in bot/commands/registry.py goes with the
campaigns feature."""

from __future__ import annotations

from bot.commands.spec import Access, ArgumentRule, Command, CommandContext, CommandSpec
from jobs.kernel.job import Job


def handle(context: CommandContext, job: Job | None, command: Command) -> str:
    return context.plugged(command)  # served by the campaigns' plug (bot/server/campaigns/plug.py)


SPEC = CommandSpec(
    verb="campaign",
    usage="campaign <command>",
    summary="steer the campaign of this issue: `approve <repo>` or `approve all`, `retry-failed`, "
            "`skip <repo> <reason>`, `pause`, `resume`, `cancel`, `add <repo>`",
    argument=ArgumentRule.REQUIRED_TEXT,
    handle=handle,
    access=Access.ANYONE,  # the campaign authorizes each effect where it happens
    needs_job=False,
)
