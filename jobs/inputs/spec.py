"""The task spec: its model and checks; the recipes' own parts are registered through
jobs/inputs/recipes.py (each lives in jobs/recipes/), the reading of an issue's ```stepwise
block is jobs/inputs/spec_block.py (re-exported here)."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator, Sequence
from enum import StrEnum
from typing import Annotated, Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from pydantic_core import PydanticCustomError

from jobs.inputs.batch_sizes import BatchSize
from jobs.inputs.globs import unsafe_path_reason
from jobs.inputs.programs import split_command
from jobs.inputs.recipes import owner_of, recipe_examples, registered, rules_for
from jobs.inputs.spec_block import (
    MINIMAL_EXAMPLE,
    InvalidSpecError,
    extract_spec_block,
    spec_error,
    spec_errors,
)
from jobs.inputs.yaml_input import (
    InputProblem,
    load_yaml_mapping,  # refuses text over 64 KiB
    problem_from_validation,
    problems_from_validation,
    unknown_keys,
)

MAX_PATHS = 200
MAX_FIND = 50
MAX_PATTERN_CHARS = 1000
MAX_NOT_DOING = 50

# Recipe `command`'s `run` is a typed field of the spec, so its placeholder lives here.
FILES_PLACEHOLDER = "{files}"
FILES_HINT = "put {files} where the batch's file paths go, e.g. `ruff check --fix {files}`"

EXAMPLES = {
    "recipe": "recipe: replace",
    "paths": 'paths: ["src/**/*.py"]',
    "exclude": 'exclude: ["src/vendor/**"]',
    "find": "find: ['\\bprint\\(']",
    "not_doing": 'not_doing: ["refactor unrelated code"]',
    "done_when": "done_when: checks_pass",
    "batch_size": "batch_size: 5",
    "batch_size_max": "batch_size_max: 16",
}
__all__ = ["EXAMPLES", "FILES_HINT", "FILES_PLACEHOLDER", "MINIMAL_EXAMPLE", "DoneWhen",
           "InvalidSpecError", "IssueTask", "Recipe", "TaskSpec", "extract_spec_block",
           "parse_issue", "parse_issue_file", "parse_spec", "spec_error"]

class Recipe(StrEnum):
    """The built-in recipes (jobs/recipes/ registers them, and any other, in RECIPES)."""

    REPLACE = "replace"
    COMMAND = "command"
    LLM = "llm"


class DoneWhen(StrEnum):
    """What, besides the validation commands, proves a batch is done."""

    NO_MATCHES = "no_matches"
    CHECKS_PASS = "checks_pass"  # noqa: S105 - not a password


class TaskSpec(BaseModel):
    """What to change, where, and how to tell it is done."""

    # Each field's docstring is its documentation: the docs' key reference is generated from it.
    # extra="allow": the keys of a registered recipe's `options` (checked by `_check_recipe`;
    # `_parse_block` refuses any key no recipe registered).
    model_config = ConfigDict(frozen=True, extra="allow", strict=True,
                              use_attribute_docstrings=True)

    recipe: Recipe | str
    """How batches are edited: one of the registered recipes (README.md's row names each, from
    its `summary` in jobs/recipes/)."""
    paths: list[str] = Field(max_length=MAX_PATHS)
    """Globs of the tracked files in scope, e.g. `["src/**/*.py"]`. Files no batch may edit
    (tests without `allow_test_edits`, `protected_paths`, symlinks, submodules) are left out
    and listed in the plan with their rule; a `paths` that leaves nothing to edit is refused."""
    exclude: list[str] = Field(default=[], max_length=MAX_PATHS)
    """Globs taken out of `paths`, e.g. `["src/vendor/**"]`."""
    find: list[Annotated[str, Field(max_length=MAX_PATTERN_CHARS)]] = Field(
        default=[], max_length=MAX_FIND
    )
    """Python regular expressions marking the lines to change (one string or a list). With
    `find`, only files that match are batched, and each match is a `path:line` target."""
    replace: str | None = None
    """Recipe `replace`: the `re.sub` template written over each `find` match (`\\1` and
    `\\g<name>` refer to groups)."""
    run: str | None = None
    """Recipe `command`: the codemod's command line, run without a shell, with `{files}` as
    its own argument (replaced by the batch's files), e.g. `ruff check --fix {files}`. Its
    program must be on `allow_commands`."""
    instructions: str | None = None
    """Recipe `llm` (and a command's `fallback: llm`): what the model should change, in words."""
    fallback: Literal["llm"] | None = None
    """Recipe `command`: `llm` hands the codemod's residue to the model (files where `find`
    still matches, or whose validation fails), with the codemod's findings and `instructions`."""
    not_doing: list[str] = Field(default=[], max_length=MAX_NOT_DOING)
    """What the job will not do; shown in the plan and the change note."""
    # Omitted: no_matches when `find` is set, else checks_pass (filled in by _default_done_when).
    done_when: Annotated[DoneWhen, Field(strict=False)] = DoneWhen.CHECKS_PASS
    """When a batch is done: `no_matches` (no `find` match is left in its files, and
    validation passes) or `checks_pass` (validation passes; remaining matches become
    leftovers). Default: `no_matches` when `find` is set, else `checks_pass`."""
    batch_size: BatchSize | None = None
    """Files per batch for this job, or `auto` (default: the config's `batch_size`)."""
    batch_size_max: int | None = Field(default=None, ge=1, le=100)
    """With `batch_size: auto`, the most files a batch may grow to (default: the config's)."""

    @model_validator(mode="before")
    @classmethod
    def _default_done_when(cls, data: Any) -> Any:
        if isinstance(data, dict) and "done_when" not in data:
            done = DoneWhen.NO_MATCHES if data.get("find") else DoneWhen.CHECKS_PASS
            return {**data, "done_when": done}
        return data

    @field_validator("recipe", mode="before")
    @classmethod
    def _registered_recipe(cls, value: Any) -> Any:
        recipes = registered()
        if isinstance(value, str) and value in recipes:
            return Recipe(value) if value in Recipe._value2member_map_ else value
        names = [f"'{name}'" for name in recipes]
        expected = ", ".join(names[:-1]) + f" or {names[-1]}" if len(names) > 1 else names[0]
        raise PydanticCustomError("enum", "unknown recipe", {"expected": expected})

    @field_validator("paths", "exclude", "find", "not_doing", mode="before")
    @classmethod
    def _one_string(cls, value: Any) -> Any:
        """A single string where a list goes is a list of that one string."""
        return [value] if isinstance(value, str) else value

    @model_validator(mode="after")
    def _check(self) -> Self:
        problems = list(self._path_problems())
        try:
            self._check_recipe()
        except InputProblem as problem:
            problems.append(problem)
        if problems:
            raise spec_errors(problems)
        return self

    def _path_problems(self) -> Iterator[InputProblem]:
        if not self.paths:
            hint = f"list the files in scope, e.g. `{EXAMPLES['paths']}`"
            yield InputProblem("paths", "is empty", hint)
        for key, globs in (("paths", self.paths), ("exclude", self.exclude)):
            for i, glob in enumerate(globs):
                if reason := unsafe_path_reason(glob):
                    yield InputProblem(f"{key}[{i}]", reason, "use a repository-relative glob")
        for i, pattern in enumerate(self.find):
            if not pattern:
                yield InputProblem(f"find[{i}]", "is empty and would match everywhere", "remove it")
                continue
            try:
                re.compile(pattern)
            except re.error as exc:
                problem = f"is not a valid regular expression: {exc}"
                hint = "fix the regular expression (Python `re` syntax; escape ( [ . with \\)"
                yield InputProblem(f"find[{i}]", problem, hint)

    def _check_recipe(self) -> None:
        rules = rules_for(self.recipe)
        for key in self._recipe_keys():
            owner = owner_of(key)
            if owner is None:  # only a registered recipe's options are kept beside the fields
                raise InputProblem(key, "unknown field", f"valid fields: {', '.join(spec_keys())}")
            if owner != rules.name and not (key == "instructions" and self.fallback == "llm"):
                raise InputProblem(key, f"is only used by recipe {owner}", f"remove `{key}`")
        if rules.options is not None:
            try:
                rules.options.model_validate(self.model_extra or {})
            except ValidationError as exc:
                raise problem_from_validation(exc, dict(rules.examples)) from None
        rules.check(self)
        if self.done_when is DoneWhen.NO_MATCHES and not self.find:
            hint = "add `find` patterns, or use `done_when: checks_pass`"
            raise InputProblem("done_when", "no_matches needs `find` patterns to check", hint)

    def _recipe_keys(self) -> list[str]:
        """The recipe-only keys this spec sets (typed fields, and a recipe's own options)."""
        typed = [key for rules in registered().values() for key in rules.fields
                 if getattr(self, key, None) is not None]
        return typed + list(self.model_extra or {})

    def options(self) -> dict[str, Any]:
        """The keys of a recipe that registered its own `options`, as written."""
        return dict(self.model_extra or {})

    def run_argv(self, files: Sequence[str]) -> list[str]:
        """`run` as argv, its standalone `{files}` replaced by `files` (`-x` becomes `./-x`)."""
        if self.run is None:
            raise ValueError(f"recipe {self.recipe} has no `run` command")
        if isinstance(files, str) or not files:
            raise ValueError("run_argv needs a non-empty list of file paths")
        paths = [f"./{path}" if path.startswith("-") else path for path in files]
        argv: list[str] = []
        for arg in split_command(self.run):
            argv.extend(paths if arg == FILES_PLACEHOLDER else [arg])
        return argv

    def digest(self) -> str:
        """SHA-256 of the spec's canonical JSON: approvals are bound to it."""
        # A key added later is left out while unset, so earlier approvals stay bound.
        unset = {"batch_size_max"} if self.batch_size_max is None else set()
        canonical = json.dumps(self.model_dump(mode="json", exclude=unset), sort_keys=True,
                               separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()


class IssueTask(BaseModel):
    """An issue's goal (its title), its body, and the spec parsed from the body."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    title: str
    body: str
    spec: TaskSpec
    spec_text: str


def spec_keys() -> list[str]:
    """Every key a spec may hold: the model's fields and the registered recipes' options."""
    options = [key for rules in registered().values() if rules.options
               for key in rules.options.model_fields]
    return [*TaskSpec.model_fields, *options]


def _parse_block(text: str) -> TaskSpec:
    """The spec in `text`; every problem found is reported at once (unknown keys with a close
    match, wrong types, the spec's own checks)."""
    try:
        data = load_yaml_mapping(text, example=MINIMAL_EXAMPLE)
    except InputProblem as problem:
        raise spec_error(problem) from None
    valid = spec_keys()
    problems = unknown_keys(data, valid)
    try:
        spec = TaskSpec.model_validate({k: v for k, v in data.items() if k in valid})
    except ValidationError as exc:
        problems += problems_from_validation(exc, EXAMPLES | recipe_examples())
    except InvalidSpecError as exc:
        problems += exc.problems or [InputProblem(exc.field, exc.message, exc.hint)]
    if problems:
        raise spec_errors(problems)
    return spec


def parse_spec(markdown: str) -> TaskSpec:
    """The task spec of an issue body; SpecError (InvalidSpecError) on any problem."""
    return _parse_block(extract_spec_block(markdown))


def parse_issue(title: str, body: str) -> IssueTask:
    """An issue's title, body and spec; the title is the goal and must not be empty."""
    if not title.strip():
        hint = "give the issue a title that states the goal"
        raise InvalidSpecError("the issue title is empty", hint=hint, field="title")
    text = extract_spec_block(body)
    return IssueTask(title=title.strip(), body=body, spec=_parse_block(text), spec_text=text)


def parse_issue_file(text: str) -> IssueTask:
    """Local mode: a Markdown file whose first line is `# Title`, the rest being the body."""
    return parse_issue(*split_issue_file(text))


def split_issue_text(text: str) -> tuple[str, str]:
    """A local issue file's `# Title` line (or "" without one) and the body after it."""
    lines = re.split(r"\r\n|\r|\n", text.removeprefix("\ufeff"))
    while lines and not lines[0].strip():
        lines.pop(0)
    heading = re.fullmatch(r"#[ \t]+(.*)", lines[0]) if lines else None
    # A closing run of `#` after a space is not part of the title (`# Title ##`).
    title = re.sub(r"(?:^|[ \t]+)#+$", "", heading[1].strip()) if heading else ""
    return title, "\n".join(lines[1:])


def split_issue_file(text: str) -> tuple[str, str]:
    """An issue file's title (its first line, `# Title`) and body; InvalidSpecError without."""
    title, body = split_issue_text(text)
    if not title:
        problem = "the issue file must start with a `# Title` line"
        hint = "put the goal on the first line, e.g. `# Replace print with logging`"
        raise InvalidSpecError(problem, hint=hint, field="title")
    return title, body
