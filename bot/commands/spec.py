"""What a comment command is: the prefix, a verb's spec (usage, help text, argument rule, who
may use it, its handler), the context a handler works in, and what a parsed comment holds."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from jobs.inputs.config import RepoConfig
from jobs.kernel.job import Job

PREFIX = "/stepwise"  # the one spelling of the command prefix; usage lines read f"{PREFIX} {usage}"


class ArgumentRule(StrEnum):
    """What may follow a verb on its line."""

    NONE = "none"  # nothing: trailing text makes the command invalid rather than being ignored
    REQUIRED_TEXT = "required_text"
    BATCH_NUMBER = "batch_number"  # a positive whole number in ASCII digits
    OPTIONAL_TEXT = "optional_text"


class Access(StrEnum):
    """Who may use a verb."""

    ANYONE = "anyone"  # read-only: the answer changes nothing
    STEERING = "steering"  # write, maintain or admin on the repository, or the config's approvers


class CommandContext(Protocol):
    """What a verb's handler may do besides changing the job record (bot/server/comments.py
    implements it for the worker); `save`, `go_on` and `revert` make it the `Wiring` the
    shared use cases (jobs/engine/usecases.py) take."""

    @property
    def actor(self) -> str:
        """Who sent the command, as the record names them (`@login`)."""
        ...

    def help_table(self) -> str:
        """The command table."""
        ...

    def card(self, job: Job) -> str:
        """The job's progress card."""
        ...

    def save(self, job: Job) -> None:
        """Store the changed record."""
        ...

    def go_on(self, job: Job) -> None:
        """Queue what the job does next (its next step, or the end of a cancelled job)."""
        ...

    def revert(self, job: Job, batch: int) -> None:
        """Queue a revert of one batch."""
        ...

    def default_config(self, job: Job) -> RepoConfig:
        """`.github/stepwise.yml` as it is now on the repository's default branch."""
        ...

    def resume(self, job: Job) -> str:
        """Carry an ended job on (`/stepwise resume`); what happened. Raises RefusedError for a
        job that completed or has not ended."""
        ...

    def retry_start(self) -> str:
        """Start this issue's job again after a failed start; the reply ("" when the answer is
        posted by the start itself)."""
        ...

    def plugged(self, command: Command) -> str:
        """Hand `command` to the mode-level feature that serves its verb (the server's plugs,
        bot/server/plugs.py: `campaign` steers the issue's campaign); the reply."""
        ...


@dataclass(frozen=True)
class Command:
    verb: str  # lower-case canonical verb, e.g. "skip"
    argument: str  # the rest of the line, stripped ("" if none)
    line: int  # 1-based line number in the comment
    raw: str  # the original line


# (context, the job or None, the command) -> the reply ("" when a reaction says enough).
# Raising RefusedError or StepwiseError refuses the command with the error's message.
Handler = Callable[[CommandContext, Job | None, Command], str]


@dataclass(frozen=True)
class CommandSpec:
    """One verb: its usage line (without the prefix), its help text, its argument rule, who may
    use it, and its handler."""

    verb: str
    usage: str  # e.g. "skip <reason>"
    summary: str  # the "effect" column of the help table
    argument: ArgumentRule
    handle: Handler
    access: Access = Access.STEERING
    needs_job: bool = True  # without a job on the issue the answer says there is none
    answers_gate: bool = False  # refused when the open gate opened after the comment was written

    @property
    def placeholder(self) -> str:
        """The argument part of the usage, e.g. "<reason>" ("" for verbs without one)."""
        return self.usage.partition(" ")[2]


@dataclass(frozen=True)
class UnknownCommand:
    word: str  # what followed the prefix, e.g. "aprove" ("" for the prefix alone: answer with help)
    line: int
    raw: str
    suggestion: str | None  # the closest valid verb, e.g. "approve"


@dataclass(frozen=True)
class InvalidCommand:
    verb: str  # a known verb with a bad argument, e.g. `revert abc` or `skip` without a reason
    problem: str  # user-facing: what is wrong and how to write it
    line: int
    raw: str


ParsedCommand = Command | UnknownCommand | InvalidCommand
