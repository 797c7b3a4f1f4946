"""The editor interface: what an editor is given for one batch and what it reports back, and
what a recipe module hands the registry (its spec rules and its editor factory)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from jobs.basics.errors import StepwiseError
from jobs.inputs.llm_config import LlmConfig
from jobs.inputs.recipes import RecipeRules
from jobs.inputs.sandboxing import SandboxPolicy
from jobs.inputs.spec import TaskSpec
from jobs.kernel.records import CommandEvidence, ModelCall, Target
from jobs.ports import Sandbox
from jobs.recipes.llm_settings import LlmSettings


class CommandCancelled(Exception):
    """A command was ended because the job was cancelled while it ran."""


class EditError(StepwiseError):
    """The editor could not carry out its change; the attempt fails."""

    code = "edit_failed"


class BudgetSpentError(EditError):
    """The job's token budget is spent: the batch waits at the `budget` gate (not a failure)."""

    code = "llm_budget_spent"


@dataclass(frozen=True)
class CandidateReport:
    """The engine's verdict on the edit now in the worktree: guard, validation, completion."""

    ok: bool
    kind: str = "validated"  # validated | unchanged | guard_refused | gate | setup_failed
    #                          | validation_failed | targets_remain
    feedback: str = ""  # what failed, precisely enough for the editor's next round


@dataclass(frozen=True)
class EditHooks:
    """What the attempt runner lends an editor that works in rounds (the llm editor)."""

    check: Callable[[], CandidateReport]  # stage, guard, validate and check the worktree as is
    restore: Callable[[], None]  # put the worktree back to the job's head
    record_call: Callable[[ModelCall], None]  # count a model call against the job at once
    notify: Callable[[str], None] = lambda _text: None  # progress for the people watching
    tokens_used: int = 0  # by the job before this attempt
    budget_grants: int = 0  # approvals of the `budget` gate so far
    transcript: Path | None = None  # where this attempt's transcript goes
    title: str = ""  # names the job, batch and attempt (in the transcript)
    # Tracked regular files outside protected paths, at the job's head: what the model's reading
    # tools may open (empty: only the batch's files).
    readable: tuple[str, ...] = ()
    llm_config: LlmConfig | None = None  # the repository's `llm:` block


@dataclass(frozen=True)
class EditRequest:
    worktree: Path
    files: tuple[str, ...]
    spec: TaskSpec
    goal: str
    targets: tuple[Target, ...] = ()
    instructions: tuple[str, ...] = ()  # standing instructions from `/stepwise instruct`
    feedback: str | None = None  # why the previous attempt failed, for editors that can learn
    hooks: EditHooks | None = None  # given by the attempt runner; None in unit tests
    # The sandbox policy of the moment (with the job's environment); None: the editor's own.
    policy: SandboxPolicy | None = None


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


class EditorFactory(Protocol):
    """Makes the editor of one job (`llm`: None means the STEPWISE_LLM_* settings)."""

    def __call__(self, spec: TaskSpec, *, sandbox: Sandbox, policy: SandboxPolicy,
                 llm: LlmSettings | None) -> Editor: ...


# What a recipe does as another's `fallback`: given that recipe's editor (a codemod) and the
# model's settings, the editor that runs it and then finishes what it left.
FallbackFactory = Callable[[Editor, LlmSettings | None], Editor]


@dataclass(frozen=True)
class RecipeDefinition:
    """A recipe as its module defines it: its part of the task spec and its editor; `fallback`
    is set by a recipe another may name as its `fallback` (recipe llm after a codemod)."""

    rules: RecipeRules[TaskSpec]
    editor: EditorFactory
    fallback: FallbackFactory | None = None
