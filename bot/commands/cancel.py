"""`/stepwise cancel`: cancel the job."""

from __future__ import annotations

from bot.commands.spec import ArgumentRule, Command, CommandContext, CommandSpec
from jobs.domain.gates import Verb, apply_verb
from jobs.domain.model import Job


def handle(context: CommandContext, job: Job | None, command: Command) -> str:
    assert job is not None  # needs_job
    apply_verb(job, Verb.CANCEL)
    context.save(job)
    context.advance(job)
    return ""


# Argument: none; trailing text makes the command invalid rather than being ignored.
SPEC = CommandSpec(
    verb="cancel",
    usage="cancel",
    summary="queued job: cancelled at once; running: stop at the next safe point",
    argument=ArgumentRule.NONE,
    handle=handle,
)
