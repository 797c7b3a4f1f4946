"""The task spec: the single ```stepwise YAML block of an issue, parsed and checked."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from enum import StrEnum
from typing import Annotated, Any, Self

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from jobs.domain.config import (
    InputProblem,
    check_keys,
    command_argv,
    load_yaml_mapping,  # refuses text over 64 KiB
    problem_from_validation,
)
from jobs.domain.errors import SpecError
from jobs.domain.globs import unsafe_path_reason
from jobs.domain.programs import program_name, split_command

MAX_PATHS = 200
MAX_FIND = 50
MAX_PATTERN_CHARS = 1000
MAX_NOT_DOING = 50
FILES_PLACEHOLDER = "{files}"

MINIMAL_EXAMPLE = """```stepwise
recipe: replace
paths: ["src/**/*.py"]
find: ['\\bprint\\(']
replace: 'log.info('
```"""
EXAMPLES = {
    "recipe": "recipe: replace",
    "paths": 'paths: ["src/**/*.py"]',
    "exclude": 'exclude: ["src/vendor/**"]',
    "find": "find: ['\\bprint\\(']",
    "replace": "replace: 'log.info('",
    "run": 'run: "ruff check --fix {files}"',
    "instructions": 'instructions: "Replace print() with the module logger."',
    "not_doing": 'not_doing: ["refactor unrelated code"]',
    "done_when": "done_when: checks_pass",
    "batch_size": "batch_size: 5",
}
FILES_HINT = "put {files} where the batch's file paths go, e.g. `ruff check --fix {files}`"

_OPEN = re.compile(r"(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})(?P<info>.*)")


class Recipe(StrEnum):
    """How a batch is edited."""

    REPLACE = "replace"
    COMMAND = "command"
    LLM = "llm"


class DoneWhen(StrEnum):
    """What, besides the validation commands, proves a batch is done."""

    NO_MATCHES = "no_matches"
    CHECKS_PASS = "checks_pass"  # noqa: S105 - not a password


# The fields that only one recipe reads; any other field is shared by all recipes.
_RECIPE_FIELDS = {"replace": Recipe.REPLACE, "run": Recipe.COMMAND, "instructions": Recipe.LLM}


class InvalidSpecError(SpecError):
    """A spec problem; `field` names the offending field, or is None for the block itself."""

    def __init__(self, message: str, *, hint: str, field: str | None = None) -> None:
        super().__init__(message, hint=hint, evidence={"field": field} if field else None)
        self.field = field


def spec_error(problem: InputProblem) -> InvalidSpecError:
    where = f"spec field `{problem.field}`" if problem.field else "the ```stepwise block"
    return InvalidSpecError(f"{where}: {problem.problem}", hint=problem.hint, field=problem.field)


class TaskSpec(BaseModel):
    """What to change, where, and how to tell it is done."""

    # Each field's docstring is its documentation: README.md's key table is generated from it.
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True,
                              use_attribute_docstrings=True)

    recipe: Annotated[Recipe, Field(strict=False)]
    """How batches are edited: `replace` (a regex substitution), `command` (a codemod you
    name in `run`) or `llm` (a language model, see "Language-model edits")."""
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
    """Recipe `llm`: what the model should change, in words."""
    not_doing: list[str] = Field(default=[], max_length=MAX_NOT_DOING)
    """What the job will not do; shown in the plan and the change note."""
    # Omitted: no_matches when `find` is set, else checks_pass (filled in by _default_done_when).
    done_when: Annotated[DoneWhen, Field(strict=False)] = DoneWhen.CHECKS_PASS
    """When a batch is done: `no_matches` (no `find` match is left in its files, and
    validation passes) or `checks_pass` (validation passes; remaining matches become
    leftovers). Default: `no_matches` when `find` is set, else `checks_pass`."""
    batch_size: int | None = Field(default=None, ge=1, le=100)
    """Files per batch for this job (default: the config's `batch_size`)."""

    @model_validator(mode="before")
    @classmethod
    def _default_done_when(cls, data: Any) -> Any:
        if isinstance(data, dict) and "done_when" not in data:
            done = DoneWhen.NO_MATCHES if data.get("find") else DoneWhen.CHECKS_PASS
            return {**data, "done_when": done}
        return data

    @field_validator("find", mode="before")
    @classmethod
    def _one_pattern(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    @model_validator(mode="after")
    def _check(self) -> Self:
        try:
            self._check_paths()
            self._check_recipe()
        except InputProblem as problem:
            raise spec_error(problem) from None
        return self

    def _check_paths(self) -> None:
        if not self.paths:
            hint = f"list the files in scope, e.g. `{EXAMPLES['paths']}`"
            raise InputProblem("paths", "is empty", hint)
        for key, globs in (("paths", self.paths), ("exclude", self.exclude)):
            for i, glob in enumerate(globs):
                if reason := unsafe_path_reason(glob):
                    raise InputProblem(f"{key}[{i}]", reason, "use a repository-relative glob")
        for i, pattern in enumerate(self.find):
            if not pattern:
                raise InputProblem(f"find[{i}]", "is empty and would match everywhere", "remove it")
            try:
                re.compile(pattern)
            except re.error as exc:
                problem = f"is not a valid regular expression: {exc}"
                hint = "fix the regular expression (Python `re` syntax; escape ( [ . with \\)"
                raise InputProblem(f"find[{i}]", problem, hint) from None

    def _check_recipe(self) -> None:
        for key, owner in _RECIPE_FIELDS.items():
            if getattr(self, key) is not None and self.recipe is not owner:
                raise InputProblem(key, f"is only used by recipe {owner}", f"remove `{key}`")
        if self.recipe is Recipe.REPLACE:
            self._check_replace()
        elif self.recipe is Recipe.COMMAND:
            self._check_run()
        elif not (self.instructions or "").strip():
            hint = f"say what to change, e.g. `{EXAMPLES['instructions']}`"
            raise InputProblem("instructions", "is required by recipe llm", hint)
        if self.done_when is DoneWhen.NO_MATCHES and not self.find:
            hint = "add `find` patterns, or use `done_when: checks_pass`"
            raise InputProblem("done_when", "no_matches needs `find` patterns to check", hint)

    def _check_replace(self) -> None:
        if not self.find:
            raise InputProblem("find", "is required by recipe replace", f"add `{EXAMPLES['find']}`")
        if self.replace is None:
            hint = f"add the re.sub template, e.g. `{EXAMPLES['replace']}`"
            raise InputProblem("replace", "is required by recipe replace", hint)
        for i, pattern in enumerate(self.find):
            try:
                # Substituting into "" still compiles the template against the pattern's groups.
                re.compile(pattern).sub(self.replace, "")
            except (re.error, IndexError) as exc:
                problem = f"is not a valid template for find[{i}]: {exc}"
                hint = r"use only groups the pattern has (\1, \g<name>); a backslash is \\"
                raise InputProblem("replace", problem, hint) from None

    def _check_run(self) -> None:
        if self.run is None:
            raise InputProblem("run", "is required by recipe command", f"add `{EXAMPLES['run']}`")
        try:
            program = program_name(split_command(self.run)[0])
        except ValueError:
            program = ""
        try:
            argv = command_argv(self.run, allow_commands=[program])
        except InputProblem as bad:
            raise InputProblem("run", bad.problem, bad.hint) from None
        if FILES_PLACEHOLDER not in argv[1:]:
            raise InputProblem("run", "needs {files} as a separate argument", FILES_HINT)

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
        canonical = json.dumps(self.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()


class IssueTask(BaseModel):
    """An issue's goal (its title), its body, and the spec parsed from the body."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    title: str
    body: str
    spec: TaskSpec
    spec_text: str


def _closes(line: str, char: str, length: int) -> bool:
    return re.fullmatch(rf" {{0,3}}{re.escape(char)}{{{length},}}[ \t]*", line) is not None


def extract_spec_block(markdown: str) -> str:
    """The raw YAML of the one ```stepwise (or ~~~stepwise) fenced block in `markdown`."""
    blocks: list[tuple[int, str]] = []
    fence: tuple[str, int, int, bool, int] | None = None  # char, length, indent, is_spec, line
    body: list[str] = []
    in_comment = False  # an HTML comment (issue templates keep examples there) hides fences
    for number, line in enumerate(re.split(r"\r\n|\r|\n", markdown), start=1):
        if in_comment or (fence is None and re.match(r" {0,3}<!--", line)):
            in_comment = "-->" not in (line.split("<!--", 1)[1] if not in_comment else line)
        elif fence is None:
            match = _OPEN.fullmatch(line)
            if match is None or (match["fence"][0] == "`" and "`" in match["info"]):
                continue
            is_spec = match["info"].strip().lower() == "stepwise"
            fence = (match["fence"][0], len(match["fence"]), len(match["indent"]), is_spec, number)
            body = []
        elif _closes(line, fence[0], fence[1]):
            if fence[3]:
                blocks.append((fence[4], "\n".join(body)))
            fence = None
        elif fence[3]:
            indent = len(line) - len(line.lstrip(" "))
            body.append(line[min(indent, fence[2]) :])
    if fence is not None and fence[3]:
        closing = fence[0] * fence[1]
        problem = f"the block opened at line {fence[4]} is never closed"
        raise spec_error(InputProblem(None, problem, f"end it with a line holding only {closing}"))
    if not blocks:
        hint = f"add a fenced block whose info string is `stepwise`, e.g.\n{MINIMAL_EXAMPLE}"
        raise InvalidSpecError("no ```stepwise block was found in the issue body", hint=hint)
    if len(blocks) > 1:
        lines = ", ".join(str(start) for start, _ in blocks)
        problem = f"found {len(blocks)} ```stepwise blocks (at lines {lines}); there must be one"
        raise spec_error(InputProblem(None, problem, "merge them into a single block"))
    return blocks[0][1]


def _parse_block(text: str) -> TaskSpec:
    try:
        data = load_yaml_mapping(text, example=MINIMAL_EXAMPLE)
        check_keys(data, list(TaskSpec.model_fields))
        return TaskSpec.model_validate(data)
    except InputProblem as problem:
        raise spec_error(problem) from None
    except ValidationError as exc:
        raise spec_error(problem_from_validation(exc, EXAMPLES)) from None


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
    lines = re.split(r"\r\n|\r|\n", text.removeprefix("\ufeff"))
    while lines and not lines[0].strip():
        lines.pop(0)
    heading = re.fullmatch(r"#[ \t]+(.*)", lines[0]) if lines else None
    # A closing run of `#` after a space is not part of the title (`# Title ##`).
    title = re.sub(r"(?:^|[ \t]+)#+$", "", heading[1].strip()) if heading else ""
    if not title:
        problem = "the issue file must start with a `# Title` line"
        hint = "put the goal on the first line, e.g. `# Replace print with logging`"
        raise InvalidSpecError(problem, hint=hint, field="title")
    return parse_issue(title, "\n".join(lines[1:]))
