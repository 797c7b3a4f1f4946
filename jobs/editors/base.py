"""The editor interface: what an editor is given for one batch and what it reports back."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from jobs.errors import StepwiseError
from jobs.model import CommandEvidence, Target
from jobs.spec import TaskSpec


class CommandCancelled(Exception):
    """A command was ended because the job was cancelled while it ran."""


class EditError(StepwiseError):
    """The editor could not carry out its change; the attempt fails."""

    code = "edit_failed"


@dataclass(frozen=True)
class EditRequest:
    worktree: Path
    files: tuple[str, ...]
    spec: TaskSpec
    goal: str
    targets: tuple[Target, ...] = ()
    instructions: tuple[str, ...] = ()  # standing instructions from `/stepwise instruct`
    feedback: str | None = None  # why the previous attempt failed, for editors that can learn


@dataclass(frozen=True)
class EditResult:
    summary: str
    file_summaries: dict[str, str] = field(default_factory=dict)
    commands: tuple[CommandEvidence, ...] = ()


class Editor(Protocol):
    name: str

    def apply(self, request: EditRequest) -> EditResult:
        """Change the batch's files in `request.worktree`; raise EditError when it cannot."""
        ...
