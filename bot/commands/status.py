"""`/stepwise status`: reply with the progress card and what the job is doing now (the status
use case in jobs/engine/usecases.py, shared with `stepwise status`)."""

from __future__ import annotations

from bot.commands.spec import Access, ArgumentRule, Command, CommandContext, CommandSpec
from jobs.engine.usecases import Progress, status
from jobs.kernel.job import Job

# The card already shows the gate's prompt and a gate comment still waiting to be published.
_SAID_BY_THE_CARD = (Progress.AT_GATE, Progress.UNPUBLISHED)


def handle(context: CommandContext, job: Job | None, command: Command) -> str:
    assert job is not None  # needs_job
    report = status(job)
    card = context.card(job)
    return card if report.progress in _SAID_BY_THE_CARD else f"{card}\n\n{report.message}"


# Argument: none; trailing text makes the command invalid rather than being ignored.
SPEC = CommandSpec(
    verb="status",
    usage="status",
    summary="reply with the progress card",
    argument=ArgumentRule.NONE,
    handle=handle,
    access=Access.ANYONE,
)
