"""`/stepwise reload-config`: at the plan gate, read `.github/stepwise.yml` again from the
default branch and plan again with it (the baseline runs again); the new plan waits at the
plan gate for `/stepwise approve`."""

from __future__ import annotations

from bot.commands.spec import ArgumentRule, Command, CommandContext, CommandSpec
from jobs.engine import usecases
from jobs.kernel.job import Job


def handle(context: CommandContext, job: Job | None, command: Command) -> str:
    assert job is not None  # needs_job
    return usecases.reload_config(context, job, context.default_config(job))


# Argument: none; trailing text makes the command invalid rather than being ignored.
SPEC = CommandSpec(
    verb="reload-config",
    usage="reload-config",
    summary="at the `plan` gate: read the repository config again from the default branch "
            "and plan again (baseline included)",
    argument=ArgumentRule.NONE,
    handle=handle,
    answers_gate=True,
)
