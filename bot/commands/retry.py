"""`/stepwise retry`: retry the paused batch."""

from __future__ import annotations

from bot.commands.spec import ArgumentRule, Command, CommandContext, CommandSpec
from jobs.engine import usecases
from jobs.kernel.gates import Verb
from jobs.kernel.job import Job


def handle(context: CommandContext, job: Job | None, command: Command) -> str:
    assert job is not None  # needs_job
    usecases.steer(context, job, Verb.RETRY)
    return ""


# Argument: none; trailing text makes the command invalid rather than being ignored.
SPEC = CommandSpec(
    verb="retry",
    usage="retry",
    summary="retry the paused batch, attempts counter reset",
    argument=ArgumentRule.NONE,
    handle=handle,
    answers_gate=True,
)
