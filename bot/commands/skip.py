"""`/stepwise skip <reason>`: skip the paused batch, giving a reason."""

from __future__ import annotations

from bot.commands.spec import ArgumentRule, Command, CommandContext, CommandSpec
from jobs.domain.gates import Verb
from jobs.domain.job import Job
from jobs.engine import usecases


def handle(context: CommandContext, job: Job | None, command: Command) -> str:
    assert job is not None  # needs_job
    usecases.steer(context, job, Verb.SKIP, reason=command.argument)
    return ""


# Argument: the rest of the line is the reason; it may not be empty.
SPEC = CommandSpec(
    verb="skip",
    usage="skip <reason>",
    summary="mark the paused batch `skipped` with the reason, go on",
    argument=ArgumentRule.REQUIRED_TEXT,
    handle=handle,
    answers_gate=True,
)
