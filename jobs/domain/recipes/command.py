"""Recipe `command`: a codemod named in `run`, given the batch's files as `{files}` (the
editor is jobs/editors/command.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from jobs.domain.programs import program_name, split_command
from jobs.domain.recipes import RecipeRules
from jobs.domain.yaml_input import InputProblem, command_argv

if TYPE_CHECKING:
    from jobs.domain.spec import TaskSpec

FILES_PLACEHOLDER = "{files}"
FILES_HINT = "put {files} where the batch's file paths go, e.g. `ruff check --fix {files}`"
EXAMPLES = {"run": 'run: "ruff check --fix {files}"'}


def check(spec: TaskSpec) -> None:
    if spec.run is None:
        raise InputProblem("run", "is required by recipe command", f"add `{EXAMPLES['run']}`")
    try:
        program = program_name(split_command(spec.run)[0])
    except ValueError:
        program = ""
    try:
        argv = command_argv(spec.run, allow_commands=[program])
    except InputProblem as bad:
        raise InputProblem("run", bad.problem, bad.hint) from None
    if FILES_PLACEHOLDER not in argv[1:]:
        raise InputProblem("run", "needs {files} as a separate argument", FILES_HINT)


RULES = RecipeRules(name="command", check=check, fields=("run",), examples=EXAMPLES)
