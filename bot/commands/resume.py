"""`/stepwise resume`: carry on a job that was cancelled or failed, on the same branch and pull
request, keeping every completed batch (refused for a completed job or one that has not ended)."""

from __future__ import annotations

from bot.commands.spec import ArgumentRule, Command, CommandContext, CommandSpec
from jobs.kernel.job import Job


def handle(context: CommandContext, job: Job | None, command: Command) -> str:
    assert job is not None  # needs_job
    return context.resume(job)


# Argument: none; trailing text makes the command invalid rather than being ignored.
SPEC = CommandSpec(
    verb="resume",
    usage="resume",
    summary="carry on a cancelled or failed job on the same branch and pull request, keeping "
            "every completed batch (the trigger label added again does the same)",
    argument=ArgumentRule.NONE,
    handle=handle,
)
