"""The recipe registry's mechanism: `RecipeRules` (a recipe's part of the task spec), the
`RECIPES` table and its lookups. The recipes themselves live in jobs/recipes/, one module per
recipe holding its rules and its editor; each composition root (local mode, the server wiring,
the CLI, the test kit) registers them with `jobs.recipes.install_recipes` before reading a spec.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

# The task spec a recipe checks (jobs/inputs/spec.py's TaskSpec, which imports this module: a
# type parameter rather than an import keeps the two free of a cycle).
SpecT = TypeVar("SpecT")

NOT_REGISTERED = (
    "no recipe is registered, so no task spec can be read: importing registers none. Fix: call "
    "`jobs.composition.install()` where the process starts (its composition root, as "
    "jobs/local.py, bot/server/context.py, bot/web/app.py, the CLI and tests/conftest.py do)."
)


class RecipesNotRegisteredError(RuntimeError):
    """A spec was read before any recipe was registered (a wiring bug, never bad input)."""


@dataclass(frozen=True)
class RecipeRules(Generic[SpecT]):
    """One recipe's part of the task spec.

    `fields` are the spec keys only this recipe reads that are typed fields of `TaskSpec`
    (the built-in recipes'); `options` is a pydantic model of the keys of a recipe that adds
    its own (kept in the spec as they were written, validated by this model). `check` raises
    `jobs.inputs.yaml_input.InputProblem` for a spec the recipe cannot carry out.
    What the recipe is, for the loop and the features, which never compare recipe names:
    `deterministic`: the same files get the same edit every time, so a failure that does not
    depend on chance would come back on a retry (the `failure` gate opens at once and recommends
    another answer than `retry`; a failing multi-file batch is split at once);
    `replayable`: when the base branch moves it can be run again on the base's version of a
    conflicting file (jobs/features/base_moves/rules.py);
    `may_change_nothing`: an edit that changes nothing with no `find` target left is "nothing to
    change" (a codemod with nothing to fix), not a failure;
    `reports_findings`: its edit command prints `path:line` findings it did not fix, which
    become leftovers for a human to confirm;
    `needs_environment`: its edit runs a program, so the job's environment is built first;
    `uses_model`: its edits are a language model's, which spend tokens (the forecast counts them);
    `preview`: the recipe's edit of one file's text, made in this process with no side effect
    (a campaign's sample diff); None when the edit needs a sandbox or a model."""

    name: str
    check: Callable[[SpecT], None]
    fields: tuple[str, ...] = ()
    options: type[BaseModel] | None = None
    examples: Mapping[str, str] = field(default_factory=dict)  # key -> a line of YAML
    deterministic: bool = False
    replayable: bool = False
    may_change_nothing: bool = False
    reports_findings: bool = False
    needs_environment: bool = False
    uses_model: bool = False
    preview: Callable[[str, SpecT], str] | None = None
    summary: str = ""  # what it does, in a few words (the README's `recipe` row)

    @property
    def keys(self) -> tuple[str, ...]:
        """Every spec key only this recipe reads."""
        return self.fields + tuple(self.options.model_fields if self.options else ())


RECIPES: dict[str, RecipeRules[Any]] = {}


def registered() -> dict[str, RecipeRules[Any]]:
    """The registered recipes; raises RecipesNotRegisteredError, naming the fix, when none is."""
    if not RECIPES:
        raise RecipesNotRegisteredError(NOT_REGISTERED)
    return RECIPES


def register(rules: RecipeRules[SpecT]) -> RecipeRules[SpecT]:
    """Add a recipe; its name and keys must be new (a clash would make specs ambiguous)."""
    if rules.name in RECIPES:
        raise ValueError(f"recipe {rules.name!r} is registered twice")
    taken = {key: other.name for other in RECIPES.values() for key in other.keys}
    for key in rules.keys:
        if key in taken:
            raise ValueError(f"recipe {rules.name!r}: key {key!r} already belongs to {taken[key]!r}")
    RECIPES[rules.name] = rules
    return rules


def unregister(name: str) -> None:
    """Remove a recipe added by `register` (tests)."""
    RECIPES.pop(name, None)


def rules_for(name: str) -> RecipeRules[Any]:
    return registered()[name]


def owner_of(key: str) -> str | None:
    """The recipe that alone reads spec key `key`, or None for a shared key."""
    return next((rules.name for rules in registered().values() if key in rules.keys), None)


def recipes_in_words() -> str:
    """The registered recipes with their summaries: "`a` (does x), `b` or `c` (does z)"."""
    words = [f"`{rules.name}`" + (f" ({rules.summary})" if rules.summary else "")
             for rules in registered().values()]
    return ", ".join(words[:-1]) + f" or {words[-1]}" if len(words) > 1 else words[0]


def recipe_examples() -> dict[str, str]:
    """Every registered recipe's example lines, by key (for the hints of spec errors)."""
    return {key: line for rules in registered().values() for key, line in rules.examples.items()}
