"""Editors change a batch's files in the worktree; they never stage, commit or validate.

The registry: one factory per recipe name (the recipe's spec part is registered in
jobs/domain/recipes/). A new recipe's editor: its module and one line in `BUILT_IN`, or
`register_editor` from anywhere before a job runs.
"""

from __future__ import annotations

from typing import Protocol

from jobs.domain.sandboxing import SandboxPolicy
from jobs.domain.spec import TaskSpec
from jobs.editors.base import EditError, EditHooks, Editor, EditRequest, EditResult
from jobs.editors.command import CommandEditor
from jobs.editors.llm.editor import LlmEditor
from jobs.editors.llm.settings import LlmSettings, load_llm_settings
from jobs.editors.replace import ReplaceEditor
from jobs.ports import Sandbox

__all__ = ["EDITORS", "EditError", "EditHooks", "EditRequest", "EditResult", "Editor",
           "EditorFactory", "editor_for", "register_editor"]


class EditorFactory(Protocol):
    def __call__(self, spec: TaskSpec, *, sandbox: Sandbox, policy: SandboxPolicy,
                 llm: LlmSettings | None) -> Editor: ...


EDITORS: dict[str, EditorFactory] = {}


def register_editor(recipe: str, factory: EditorFactory) -> None:
    if recipe in EDITORS:
        raise ValueError(f"recipe {recipe!r} already has an editor")
    EDITORS[recipe] = factory


def editor_for(spec: TaskSpec, *, sandbox: Sandbox, policy: SandboxPolicy,
               llm: LlmSettings | None = None) -> Editor:
    """The editor that carries out `spec.recipe` (`llm` defaults to the STEPWISE_LLM_* settings)."""
    factory = EDITORS.get(spec.recipe)
    if factory is None:
        raise EditError(f"recipe {spec.recipe!r} has no editor",
                        hint="register one in jobs/editors/__init__.py")
    return factory(spec, sandbox=sandbox, policy=policy, llm=llm)


def _replace(spec: TaskSpec, *, sandbox: Sandbox, policy: SandboxPolicy,
             llm: LlmSettings | None) -> Editor:
    return ReplaceEditor()


def _command(spec: TaskSpec, *, sandbox: Sandbox, policy: SandboxPolicy,
             llm: LlmSettings | None) -> Editor:
    return CommandEditor(sandbox=sandbox, policy=policy)


def _llm(spec: TaskSpec, *, sandbox: Sandbox, policy: SandboxPolicy,
         llm: LlmSettings | None) -> Editor:
    return LlmEditor(llm or load_llm_settings())


BUILT_IN: dict[str, EditorFactory] = {  # one line per recipe
    "replace": _replace,
    "command": _command,
    "llm": _llm,
}
for _recipe, _factory in BUILT_IN.items():
    register_editor(_recipe, _factory)
