"""A new comment command is one module and one registry line: a verb defined here and
registered with one `register` call is parsed, authorized, dispatched to its handler by the
worker and answered on the issue, and shows in `/stepwise help`."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bot.commands import ArgumentRule, Command, CommandContext, CommandSpec, parse_comment
from bot.commands.registry import register, unregister
from jobs.kernel.job import Job
from tests.bot.conftest import World


def handle(context: CommandContext, job: Job | None, command: Command) -> str:
    assert job is not None  # needs_job
    return f"pong {command.argument} (job {job.number} is {job.status})"


SPEC = CommandSpec(verb="ping", usage="ping <word>", summary="answer with the word and the job's status",
                   argument=ArgumentRule.REQUIRED_TEXT, handle=handle)


@pytest.fixture
def ping() -> Iterator[None]:
    register(SPEC)  # the one line a new verb adds (to COMMANDS, in bot/commands/registry.py)
    yield
    unregister("ping")


def test_a_registered_verb_is_parsed_with_its_argument_rule(ping: None) -> None:
    assert parse_comment("/stepwise ping hello", app_slug="stepwise") == [
        Command(verb="ping", argument="hello", line=1, raw="/stepwise ping hello")]
    (invalid,) = parse_comment("/stepwise ping", app_slug="stepwise")
    assert invalid.verb == "ping" and "ping <word>" in getattr(invalid, "problem", "")


def test_a_registered_verb_runs_through_the_dispatcher_and_is_answered(world: World,
                                                                     ping: None) -> None:
    world.send("issues.labeled", issue_number=1, sender="maria")
    world.work()
    status = world.job().status
    world.comment("/stepwise ping hello", by="maria")
    world.work()
    assert any(f"pong hello (job 1 is {status})" in body for body in world.bodies(1))
    world.comment("/stepwise ping again", by="tom")  # triage only: the dispatcher refuses
    world.work()
    assert any("ping again" in body and "Refused" in body for body in world.bodies(1))
    assert not any("pong again" in body for body in world.bodies(1))
    world.comment("/stepwise help", by="tom")
    world.work()
    assert any("`/stepwise ping <word>` | answer with the word" in body
               for body in world.bodies(1))


def test_a_verb_is_registered_once(ping: None) -> None:
    with pytest.raises(ValueError, match="registered twice"):
        register(SPEC)
