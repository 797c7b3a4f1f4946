"""Recipe `llm`: a language model edits each batch following `instructions` (the editor is
jobs/editors/llm/)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from jobs.domain.recipes import RecipeRules
from jobs.domain.yaml_input import InputProblem

if TYPE_CHECKING:
    from jobs.domain.spec import TaskSpec

EXAMPLES = {"instructions": 'instructions: "Replace print() with the module logger."'}


def check(spec: TaskSpec) -> None:
    if not (spec.instructions or "").strip():
        hint = f"say what to change, e.g. `{EXAMPLES['instructions']}`"
        raise InputProblem("instructions", "is required by recipe llm", hint)


RULES = RecipeRules(name="llm", check=check, fields=("instructions",), examples=EXAMPLES)
