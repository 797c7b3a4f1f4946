"""Editors change a batch's files in the worktree; they never stage, commit or validate."""

from __future__ import annotations

from jobs.domain.sandboxing import SandboxPolicy
from jobs.domain.spec import Recipe, TaskSpec
from jobs.editors.base import EditError, EditHooks, Editor, EditRequest, EditResult
from jobs.editors.command import CommandEditor
from jobs.editors.llm.editor import LlmEditor
from jobs.editors.llm.settings import LlmSettings, load_llm_settings
from jobs.editors.replace import ReplaceEditor
from jobs.ports import Sandbox

__all__ = ["EditError", "EditHooks", "EditRequest", "EditResult", "Editor", "editor_for"]


def editor_for(spec: TaskSpec, *, sandbox: Sandbox, policy: SandboxPolicy,
               llm: LlmSettings | None = None) -> Editor:
    """The editor that carries out `spec.recipe` (`llm` defaults to the STEPWISE_LLM_* settings)."""
    if spec.recipe is Recipe.REPLACE:
        return ReplaceEditor()
    if spec.recipe is Recipe.COMMAND:
        return CommandEditor(sandbox=sandbox, policy=policy)
    return LlmEditor(llm or load_llm_settings())
