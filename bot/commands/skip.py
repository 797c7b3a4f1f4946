"""`/stepwise skip <reason>`: skip the paused batch, giving a reason (it names the files it
leaves); `/stepwise skip --files a.py b.py <reason>`: only those files, the rest runs again."""

from __future__ import annotations

from bot.commands.spec import ArgumentRule, Command, CommandContext, CommandSpec
from jobs.engine import usecases
from jobs.kernel.gates import Verb, split_skip_words
from jobs.kernel.job import Job


def handle(context: CommandContext, job: Job | None, command: Command) -> str:
    assert job is not None  # needs_job
    words = command.argument.split()
    if words[:1] == [FILES_FLAG]:  # `skip --files a.py b.py <reason>`: only those files
        files, reason = split_skip_words(job, words[1:])
        return usecases.steer(context, job, Verb.SKIP, reason=reason, files=files)
    usecases.steer(context, job, Verb.SKIP, reason=command.argument)
    return ""


FILES_FLAG = "--files"


# Argument: the rest of the line is the reason; it may not be empty.
SPEC = CommandSpec(
    verb="skip",
    usage="skip <reason>",
    summary="mark the paused batch `skipped` with the reason, go on",
    argument=ArgumentRule.REQUIRED_TEXT,
    handle=handle,
    answers_gate=True,
)
