"""Recipe `replace`: a regular-expression substitution of each `find` match (the editor is
jobs/editors/replace.py)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from jobs.domain.recipes import RecipeRules
from jobs.domain.yaml_input import InputProblem

if TYPE_CHECKING:
    from jobs.domain.spec import TaskSpec

EXAMPLES = {"replace": "replace: 'log.info('"}
FIND_EXAMPLE = "find: ['\\bprint\\(']"


def check(spec: TaskSpec) -> None:
    if not spec.find:
        raise InputProblem("find", "is required by recipe replace", f"add `{FIND_EXAMPLE}`")
    if spec.replace is None:
        hint = f"add the re.sub template, e.g. `{EXAMPLES['replace']}`"
        raise InputProblem("replace", "is required by recipe replace", hint)
    for i, pattern in enumerate(spec.find):
        try:
            # Substituting into "" still compiles the template against the pattern's groups.
            re.compile(pattern).sub(spec.replace, "")
        except (re.error, IndexError) as exc:
            problem = f"is not a valid template for find[{i}]: {exc}"
            hint = r"use only groups the pattern has (\1, \g<name>); a backslash is \\"
            raise InputProblem("replace", problem, hint) from None


RULES = RecipeRules(name="replace", check=check, fields=("replace",), examples=EXAMPLES)
