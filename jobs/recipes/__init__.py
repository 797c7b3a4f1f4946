"""Editors change a batch's files in the worktree; they never stage, commit or validate.

The recipe registry (this module): one module per recipe (`replace.py`, `command.py`, and the
`llm/` package; each holds its spec rules and its editor factory, a `RecipeDefinition` named
RECIPE) and one line in `BUILT_IN` (jobs/composition.py); `base.py` is the editor interface and
what a recipe module defines, `llm_settings.py` the model endpoint's settings that the editor
factory's signature names. Importing registers nothing, nor loads a recipe: each composition
root (jobs/composition.py `install`, called by local mode, the server wiring, the CLI, the test
kit and bench) installs them before it reads a spec, as bedevere's `__main__` builds its router.
`register_recipe` adds another one before a job runs.
"""

from __future__ import annotations

from collections.abc import Iterable

from jobs.inputs.recipes import register, unregister
from jobs.inputs.sandboxing import SandboxPolicy
from jobs.inputs.spec import TaskSpec
from jobs.ports import Sandbox
from jobs.recipes.base import (
    EditError,
    EditHooks,
    Editor,
    EditorFactory,
    EditRequest,
    EditResult,
    FallbackFactory,
    RecipeDefinition,
)
from jobs.recipes.llm_settings import LlmSettings

__all__ = ["EDITORS", "FALLBACKS", "EditError", "EditHooks", "EditRequest", "EditResult", "Editor",
           "EditorFactory", "FallbackFactory", "RecipeDefinition", "editor_for", "install_recipes",
           "register_recipe", "unregister_recipe"]

EDITORS: dict[str, EditorFactory] = {}
# The recipes another may name as its `fallback` (`fallback: llm`), by name.
FALLBACKS: dict[str, FallbackFactory] = {}


def register_recipe(recipe: RecipeDefinition) -> None:
    """Register a recipe's spec rules (jobs/inputs/recipes.py) and its editor together."""
    name = recipe.rules.name
    if name in EDITORS:
        raise ValueError(f"recipe {name!r} already has an editor")
    register(recipe.rules)
    EDITORS[name] = recipe.editor
    if recipe.fallback is not None:
        FALLBACKS[name] = recipe.fallback


def install_recipes(recipes: Iterable[RecipeDefinition]) -> None:
    """Register each of `recipes` not registered yet: what a composition root calls once before
    it reads a spec (calling it again, from another root in the same process, changes nothing).
    A different recipe under a registered name is refused by `register_recipe`."""
    for recipe in recipes:
        if EDITORS.get(recipe.rules.name) is not recipe.editor:
            register_recipe(recipe)


def unregister_recipe(name: str) -> None:
    """Remove a recipe added by `register_recipe` (tests)."""
    unregister(name)
    EDITORS.pop(name, None)
    FALLBACKS.pop(name, None)


def editor_for(spec: TaskSpec, *, sandbox: Sandbox, policy: SandboxPolicy,
               llm: LlmSettings | None = None) -> Editor:
    """The editor that carries out `spec.recipe` (`llm` defaults to the STEPWISE_LLM_* settings)."""
    factory = EDITORS.get(spec.recipe)
    if factory is None:
        raise EditError(f"recipe {spec.recipe!r} has no editor",
                        hint="register it with jobs.recipes.register_recipe")
    return factory(spec, sandbox=sandbox, policy=policy, llm=llm)
