"""Reading YAML a person wrote, shared by the repository config and the task spec: a strict
loader (no aliases, no duplicate keys, a size cap), unknown keys with a close match, pydantic's
errors told as the field, the problem and the fix, and a command checked as argv against the
allowed programs."""

from __future__ import annotations

import difflib
from collections.abc import Collection, Mapping, Sequence
from typing import Any

import yaml
from pydantic import ValidationError

from jobs.inputs.programs import BLOCKED_PROGRAMS, program_name, refusal_reason, split_command

MAX_DOCUMENT_BYTES = 64 * 1024
_SHELL_TOKENS = frozenset({"&&", "||", "|", ";", "&", ">", ">>", "<", "2>", "2>&1", "$(", "`"})


class InputProblem(Exception):
    """A problem in YAML a person wrote: the field (or None), what is wrong, how to fix it."""

    def __init__(self, field: str | None, problem: str, hint: str) -> None:
        super().__init__(problem)
        self.field, self.problem, self.hint = field, problem, hint


class _StrictLoader(yaml.SafeLoader):
    """safe_load that also refuses aliases (no expansion bombs) and duplicate keys."""

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        if self.check_event(yaml.AliasEvent):
            mark = self.peek_event().start_mark  # type: ignore[no-untyped-call]
            problem = "anchors and aliases (&name, *name) are not supported"
            raise yaml.MarkedYAMLError(problem=problem, problem_mark=mark)
        return super().compose_node(parent, index)

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[str] = set()
        for key_node, _ in node.value:
            if isinstance(key_node, yaml.ScalarNode) and key_node.tag != "tag:yaml.org,2002:merge":
                if key_node.value in seen:
                    problem = f"the key `{key_node.value}` appears twice"
                    raise yaml.MarkedYAMLError(problem=problem, problem_mark=key_node.start_mark)
                seen.add(key_node.value)
        return super().construct_mapping(node, deep=deep)


def load_yaml_mapping(text: str, *, example: str, empty_ok: bool = False) -> dict[str, Any]:
    """Parse `text` (at most 64 KiB) as YAML whose top level is a mapping with string keys."""
    if len(text.encode("utf-8", "surrogatepass")) > MAX_DOCUMENT_BYTES:
        raise InputProblem(None, "it is larger than 64 KiB", "shorten it")
    try:
        data = yaml.load(text, Loader=_StrictLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = f"invalid YAML{where}: {exc.problem or exc.context}"
        raise InputProblem(None, problem, "fix the YAML at that position") from None
    except (yaml.YAMLError, RecursionError) as exc:
        raise InputProblem(None, f"cannot read the YAML: {exc}", "simplify the YAML") from None
    if data is None and empty_ok:
        return {}
    if not isinstance(data, dict):
        got = "empty" if data is None else f"{yaml_kind(data)}, not a mapping of fields"
        hint = f"write fields as `key: value`, e.g.\n{example}"
        raise InputProblem(None, f"it is {got}", hint)
    return data


def check_keys(data: Mapping[Any, Any], valid: Collection[str]) -> None:
    """Refuse keys that are not in `valid`, suggesting the closest valid one."""
    for problem in unknown_keys(data, valid):
        raise problem


def unknown_keys(data: Mapping[Any, Any], valid: Collection[str]) -> list[InputProblem]:
    """A problem for each key not in `valid`, suggesting the closest valid one."""
    problems = []
    for key in data:
        if key in valid:
            continue
        close = difflib.get_close_matches(str(key), list(valid), n=1)
        did_you_mean = f"did you mean `{close[0]}`? " if close else ""
        hint = f"{did_you_mean}valid fields: {', '.join(valid)}"
        problems.append(InputProblem(str(key), "unknown field", hint))
    return problems


def yaml_kind(value: object) -> str:
    """How YAML would name the type of `value`."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    kinds = {int: "a whole number", float: "a decimal number", str: "a string"}
    kinds |= {list: "a list", dict: "a mapping"}
    return kinds.get(type(value), f"a {type(value).__name__}")


_EXPECTED = {"string_type": "a string", "int_type": "a whole number", "bool_type": "true or false",
             "list_type": "a list", "dict_type": "a mapping"}  # fmt: skip


def field_path(loc: Sequence[int | str]) -> str:
    """('find', 1) -> `find[1]`; ('env', 'X') -> `env.X`."""
    out = ""
    for part in loc:
        if part == "[key]":
            continue
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out


def problem_from_validation(exc: ValidationError, examples: Mapping[str, str]) -> InputProblem:
    """The first pydantic error, in the user's terms, with the field's example as the hint."""
    return problems_from_validation(exc, examples)[0]


def problems_from_validation(exc: ValidationError,
                             examples: Mapping[str, str]) -> list[InputProblem]:
    """Every pydantic error, in the user's terms."""
    return [_problem(error, examples) for error in exc.errors(include_url=False)]


def _problem(error: Any, examples: Mapping[str, str]) -> InputProblem:
    loc, kind, ctx = error["loc"], error["type"], error.get("ctx", {})
    field = field_path(loc)
    example = examples.get(str(loc[0]), "") if loc else ""
    hint = f"e.g. `{example}`" if example else "see the documentation for this field"
    if kind == "missing":
        return InputProblem(field, "is required", f"add it, {hint}")
    if kind in _EXPECTED:
        got = yaml_kind(error["input"])
        if loc and loc[0] == "env":
            hint = 'quote the value, e.g. `PYTHONPATH: "src"`'
        return InputProblem(field, f"expected {_EXPECTED[kind]}, got {got}", hint)
    if kind == "enum":
        return InputProblem(field, f"must be one of {ctx['expected']}", hint)
    if kind == "too_long":
        problem = f"has {ctx['actual_length']} entries; at most {ctx['max_length']} are allowed"
        return InputProblem(field, problem, "shorten the list or split the task into smaller ones")
    if kind in ("greater_than_equal", "less_than_equal"):
        bound = f"at least {ctx['ge']}" if "ge" in ctx else f"at most {ctx['le']}"
        return InputProblem(field, f"must be {bound}, not {error['input']}", hint)
    if kind == "string_too_short":
        return InputProblem(field, "must not be empty", hint)
    if kind == "string_too_long":
        problem = f"is longer than {ctx['max_length']} characters"
        return InputProblem(field, problem, "shorten it")
    message = str(ctx["error"]) if kind == "value_error" else error["msg"]
    return InputProblem(field, message[:1].lower() + message[1:], hint)


def command_argv(text: str, *, allow_commands: Sequence[str]) -> list[str]:
    """Split a command and check its program against `allow_commands` and the blocklist."""
    try:
        argv = split_command(text)
    except ValueError as exc:
        raise InputProblem(None, str(exc), "write one command with balanced quotes") from None
    operators = [arg for arg in argv if arg in _SHELL_TOKENS or arg.startswith("$(")]
    if operators:
        problem = f"commands run without a shell, so `{operators[0]}` would be a plain argument"
        raise InputProblem(None, problem, "write each command as its own entry, without pipes")
    if "=" in argv[0] and "/" not in argv[0]:
        problem = f"`{argv[0]}` looks like an environment assignment, not a program"
        raise InputProblem(None, problem, "set environment variables in `env:` instead")
    reason = refusal_reason(argv, allow_commands)
    if reason is not None:
        name = program_name(argv[0])
        if name in BLOCKED_PROGRAMS:
            hint = "remove this command; blocked programs never run"
        elif "/" in argv[0]:
            hint = f"write `{name}` instead of a path"
        else:
            hint = f"add `{name}` to allow_commands, or remove this command"
        raise InputProblem(None, reason, hint)
    return argv
