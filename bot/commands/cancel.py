"""`/stepwise cancel`: cancel the job."""

from __future__ import annotations

from bot.commands.spec import ArgumentRule, Command, CommandContext, CommandSpec
from jobs.engine import usecases
from jobs.kernel.gates import Verb
from jobs.kernel.job import Job


def handle(context: CommandContext, job: Job | None, command: Command) -> str:
    assert job is not None  # needs_job
    usecases.steer(context, job, Verb.CANCEL)
    return ""


# Argument: none; trailing text makes the command invalid rather than being ignored.
SPEC = CommandSpec(
    verb="cancel",
    usage="cancel",
    summary="queued job: cancelled at once; running: stop at the next safe point",
    argument=ArgumentRule.NONE,
    handle=handle,
)
