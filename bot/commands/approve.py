"""`/stepwise approve`: pass the open gate."""

from __future__ import annotations

from bot.commands.spec import ArgumentRule, Command, CommandContext, CommandSpec
from jobs.engine import usecases
from jobs.kernel.gates import Verb
from jobs.kernel.job import Job


def handle(context: CommandContext, job: Job | None, command: Command) -> str:
    assert job is not None  # needs_job
    usecases.steer(context, job, Verb.APPROVE, by=context.actor)
    return ""


# Argument: none; trailing text makes the command invalid rather than being ignored.
SPEC = CommandSpec(
    verb="approve",
    usage="approve",
    summary="pass the open gate as the table says",
    argument=ArgumentRule.NONE,
    handle=handle,
    answers_gate=True,
)
