"""The recipe registry: each recipe's spec part (its name, the spec keys only it reads, the
check of a spec that uses it), one module per recipe. The task spec (jobs/domain/spec.py)
accepts the registered names and keys and asks the recipe to check its spec; the editors
are registered beside it in jobs/editors/__init__.py.

A new recipe: a module here holding its `RULES`, one line in `_built_in`, and its editor.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pydantic import BaseModel

if TYPE_CHECKING:
    from jobs.domain.spec import TaskSpec


@dataclass(frozen=True)
class RecipeRules:
    """One recipe's part of the task spec.

    `fields` are the spec keys only this recipe reads that are typed fields of `TaskSpec`
    (the built-in recipes'); `options` is a pydantic model of the keys of a recipe that adds
    its own (kept in the spec as they were written, validated by this model). `check` raises
    `jobs.domain.yaml_input.InputProblem` for a spec the recipe cannot carry out."""

    name: str
    check: Callable[[TaskSpec], None]
    fields: tuple[str, ...] = ()
    options: type[BaseModel] | None = None
    examples: Mapping[str, str] = field(default_factory=dict)  # key -> a line of YAML

    @property
    def keys(self) -> tuple[str, ...]:
        """Every spec key only this recipe reads."""
        return self.fields + tuple(self.options.model_fields if self.options else ())


RECIPES: dict[str, RecipeRules] = {}


def register(rules: RecipeRules) -> RecipeRules:
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


def rules_for(name: str) -> RecipeRules:
    return RECIPES[name]


def owner_of(key: str) -> str | None:
    """The recipe that alone reads spec key `key`, or None for a shared key."""
    return next((rules.name for rules in RECIPES.values() if key in rules.keys), None)


def _built_in() -> None:
    from jobs.domain.recipes import command, llm, replace

    for rules in (
        replace.RULES,
        command.RULES,
        llm.RULES,  # a new recipe: one line here
    ):
        register(rules)


_built_in()
