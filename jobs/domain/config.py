"""The repository config `.github/stepwise.yml`, and the YAML reading shared with the task spec."""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Collection, Iterator, Mapping, Sequence
from typing import Any, Literal, Self

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from jobs.domain.ci_config import CiConfig
from jobs.domain.errors import ConfigError
from jobs.domain.globs import unsafe_path_reason
from jobs.domain.programs import BLOCKED_PROGRAMS, program_name, refusal_reason, split_command

CONFIG_PATH = ".github/stepwise.yml"
MAX_DOCUMENT_BYTES = 64 * 1024

AllowDeletions = bool | Literal["ask"]
NetworkMode = bool | Literal["setup"]  # false: none; "setup": setup only; true: every command

# Environment names `env` may not set: they steer the sandbox, git, the proxy or Stepwise itself.
RESERVED_ENV_NAMES = frozenset(
    {"PATH", "HOME", "USER", "LOGNAME", "SHELL", "PWD", "TMPDIR",
     "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"}
)  # fmt: skip
RESERVED_ENV_PREFIXES = ("STEPWISE_", "GITHUB_", "GIT_", "LD_", "DYLD_")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PROGRAM = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]*")
_LOGIN = re.compile(r"[A-Za-z0-9](?:-?[A-Za-z0-9])*")
_NETWORK_HOST = re.compile(r"(?:\*\.)?[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
                           r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*(?::\d{1,5})?")
_TEAM = re.compile(r"@[A-Za-z0-9](?:-?[A-Za-z0-9])*/[A-Za-z0-9][A-Za-z0-9._-]*")
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


_CONFIG_EXAMPLES = {
    "setup": 'setup: ["python -m pip install -e ."]',
    "env": 'env: {PYTHONPATH: "src"}',
    "approvers": 'approvers: ["octocat", "@my-org/maintainers"]',
    "network": "network: setup",
    "network_allow": 'network_allow: ["pypi.org", "*.pythonhosted.org"]',
    "cache_key": 'cache_key: ["requirements*.txt", "package-lock.json"]',
    "ci": "ci: {wait: per_milestone, checks: [\"tests\"], timeout: 60}",
}


class RepoConfig(BaseModel):
    """`.github/stepwise.yml`: every field and its default (the README shows an example)."""

    # Each field's docstring is its documentation: README.md's key table is generated from it.
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True, populate_by_name=True,
                              use_attribute_docstrings=True)

    trigger_label: str = Field(default="stepwise", min_length=1, max_length=50)
    """The issue label that starts a job (server mode)."""
    setup: list[str] = []
    """Commands that build the job's environment once, in the sandbox, before the baseline (e.g.
    `python -m venv .venv`, `pip install -e .[test]`, `npm ci`); what they leave that git does
    not track is kept, read-only, for every later command and cached under `cache_key`. Same
    rules as `validate`."""
    validate_: list[str] = Field(default=["python -m pytest -q", "ruff check ."], alias="validate")
    """Commands that must all exit 0 on the base (the baseline) and after every batch; run as
    argv without a shell, in a sandbox, each program on `allow_commands`. Programs are found
    on the PATH of the shell that runs `stepwise`."""
    env: dict[str, str] = {}
    """Extra environment variables for `setup`, `validate` and `run` (the sandbox starts from an
    empty environment); `PATH`, `HOME`, proxies and `STEPWISE_*`/`GIT_*`/`GITHUB_*`/`LD_*` are
    reserved."""
    allow_commands: list[str] = ["pytest", "python", "ruff", "mypy", "make", "npm", "tox"]
    """Programs commands may run (bare names; `python` also admits `python3`, `python3.11`). A
    built-in blocklist (`rm`, `curl`, `git`, `sudo`, shells, ...) can never be allowed."""
    network: NetworkMode = False
    """Who may reach the network, which is only Stepwise's egress proxy: `false` nobody,
    `setup` the setup commands, `true` every command. Never loopback, private ranges or cloud
    metadata, whatever `network_allow` says."""
    network_allow: list[str] = []
    """Hosts the egress proxy admits (HTTPS): `pypi.org`, `*.example.org`, `host:8443`; empty:
    the package registries of the ecosystems the repository uses (PyPI, npm)."""
    cache_key: list[str] = []
    """Globs of files whose content, with `setup`, keys the cached environment (e.g.
    `requirements*.txt`, `package-lock.json`): a change rebuilds it."""
    ci: CiConfig = CiConfig()
    """The repository's own CI as a verifier (server mode): `wait`, `checks`, `timeout`, one row
    each below."""
    batch_size: int = Field(default=5, ge=1, le=100)
    """Files per batch (a spec's `batch_size` overrides it)."""
    batches_per_milestone: int = Field(default=4, ge=1)
    """Batches between two `milestone` gates."""
    max_failed_attempts: int = Field(default=2, ge=1, le=20)
    """Failed attempts of a batch before the `failure` gate. A failure that would repeat (a
    refused program; with `replace` and `command` also a guard rule, an edit that changed
    nothing, targets left) opens it at once."""
    command_timeout: int = Field(default=600, ge=1, le=86400)
    """Seconds each command (setup, validate, run) may take before it is killed and recorded as
    timed out."""
    require_plan_approval: bool = True
    """Stop at the `plan` gate before the first batch (a failing baseline always stops there)."""
    allow_deletions: AllowDeletions = False
    """Let a batch delete files: `false`, `true` or `"ask"` (stop at the `deletion` gate)."""
    allow_new_files: bool = False
    """Let a batch create files inside `paths`."""
    max_batch_lines: int = Field(default=400, ge=1)
    """Changed lines (added + removed) above which a batch stops at the `large_change` gate."""
    allow_test_edits: bool = False
    """Let batches edit test files (under `tests/`, `test/`, ..., or named `test_*.py`,
    `*_test.go`, `*.test.js`, ...); when false, test files in `paths` are left out at plan
    time and listed with this rule."""
    allow_manifest_edits: bool = False
    """Let batches edit dependency manifests and lock files (`pyproject.toml`,
    `requirements*.txt`, `package.json`, ...)."""
    protected_paths: list[str] = [".github/**", ".env*", "**/*.pem", "**/secrets/**"]
    """Globs no batch may ever touch (files in `paths` that match are left out at plan time); the
    change notes are never in scope either."""
    approvers: list[str] = []
    """Who may answer gates besides users with write access (server mode): logins or `@org/team`."""
    notes_dir: str = "docs/agent-changes"
    """Where the change notes are committed."""
    llm_drafts: bool = False
    """Server mode: a labelled issue without a `stepwise` block gets a spec drafted by the
    model, shown for approval."""

    @property
    def validate_commands(self) -> list[str]:
        return list(self.validate_)

    def validate_argvs(self) -> list[list[str]]:
        return [split_command(command) for command in self.validate_]

    def setup_argvs(self) -> list[list[str]]:
        return [split_command(command) for command in self.setup]

    @property
    def setup_network(self) -> bool:
        return self.network is True or self.network == "setup"

    @property
    def command_network(self) -> bool:
        """Whether validation and codemods may use the network (setup's is `setup_network`)."""
        return self.network is True

    @field_validator("network", mode="before")
    @classmethod
    def _check_network(cls, value: object) -> object:
        if value is not True and value is not False and value != "setup":
            raise ValueError(f'expected true, false or "setup", got {yaml_kind(value)}')
        return value

    @field_validator("allow_deletions", mode="before")
    @classmethod
    def _check_allow_deletions(cls, value: object) -> object:
        if value is not True and value is not False and value != "ask":
            raise ValueError(f'expected true, false or "ask", got {yaml_kind(value)}')
        return value

    @model_validator(mode="after")
    def _check(self, info: ValidationInfo) -> Self:
        try:
            self._check_fields()
        except ConfigProblems as found:
            source = (info.context or {}).get("source", CONFIG_PATH)
            raise config_errors(found.problems, source=source) from None
        return self

    def _check_fields(self) -> None:
        """Check what the types cannot; every problem is reported, not the first only."""
        problems: list[InputProblem] = []
        for check in (self._check_programs, self._check_commands, self._check_envs,
                      self._check_paths, self._check_approvers):
            problems.extend(check())
        if problems:
            raise ConfigProblems(problems)

    def _check_programs(self) -> Iterator[InputProblem]:
        for i, name in enumerate(self.allow_commands):
            if not _PROGRAM.fullmatch(name):
                hint = "write the bare program name, e.g. `pytest`"
                yield InputProblem(f"allow_commands[{i}]", f"`{name}` is not a program name", hint)
            elif name in BLOCKED_PROGRAMS:
                problem = f"`{name}` is on the built-in blocklist and cannot be allowed"
                yield InputProblem(f"allow_commands[{i}]", problem, "remove it from allow_commands")

    def _check_commands(self) -> Iterator[InputProblem]:
        for key in ("setup", "validate"):
            for i, command in enumerate(self.setup if key == "setup" else self.validate_):
                try:
                    command_argv(command, allow_commands=self.allow_commands)
                except InputProblem as bad:
                    yield InputProblem(f"{key}[{i}]", bad.problem, bad.hint)

    def _check_envs(self) -> Iterator[InputProblem]:
        for name, value in self.env.items():
            try:
                self._check_env(name, value)
            except InputProblem as bad:
                yield bad
        for i, host in enumerate(self.network_allow):
            if not _NETWORK_HOST.fullmatch(host):
                hint = "write a host name, `*.example.org` for its subdomains, or `host:port`"
                yield InputProblem(f"network_allow[{i}]", f"`{host}` is not a host name", hint)

    def _check_paths(self) -> Iterator[InputProblem]:
        for i, glob in enumerate(self.cache_key):
            if reason := unsafe_path_reason(glob):
                hint = "use a repository-relative glob, e.g. `requirements*.txt`"
                yield InputProblem(f"cache_key[{i}]", reason, hint)
        for i, path in enumerate(self.protected_paths):
            if reason := unsafe_path_reason(path):
                hint = "use a repository-relative glob, e.g. `config/**`"
                yield InputProblem(f"protected_paths[{i}]", reason, hint)
        if reason := unsafe_path_reason(self.notes_dir) or (
            "it is a glob; name one directory" if re.search(r"[*?\[]", self.notes_dir) else None
        ):
            yield InputProblem("notes_dir", reason, "use a repository-relative directory")

    def _check_approvers(self) -> Iterator[InputProblem]:
        for i, who in enumerate(self.approvers):
            if not (_LOGIN.fullmatch(who) and len(who) <= 39) and not _TEAM.fullmatch(who):
                problem = f"`{who}` is neither a login nor an @org/team name"
                hint = "write a login without @ (`octocat`) or a team as `@org/team`"
                yield InputProblem(f"approvers[{i}]", problem, hint)

    @staticmethod
    def _check_env(name: str, value: str) -> None:
        field = f"env.{name}"
        if not _ENV_NAME.fullmatch(name):
            hint = "use letters, digits and underscores, not starting with a digit"
            raise InputProblem(field, f"`{name}` is not a valid variable name", hint)
        upper = name.upper()
        if upper in RESERVED_ENV_NAMES or upper.startswith(RESERVED_ENV_PREFIXES):
            problem = f"`{name}` is reserved: Stepwise sets it or it would steer the sandbox"
            raise InputProblem(field, problem, "remove it or pick another variable name")
        if "\x00" in value:
            raise InputProblem(field, "the value contains a NUL byte", "remove the NUL byte")


def _field_keys() -> list[str]:
    return [info.alias or name for name, info in RepoConfig.model_fields.items()]


def _examples() -> dict[str, str]:
    defaults = {
        key: json.dumps(info.default, default=lambda model: model.model_dump(mode="json"))
        for key, info in zip(_field_keys(), RepoConfig.model_fields.values(), strict=True)
    }
    return {key: f"{key}: {value}" for key, value in defaults.items()} | _CONFIG_EXAMPLES


class ConfigProblems(Exception):
    """Every problem the field checks found (raised inside the model validator)."""

    def __init__(self, problems: list[InputProblem]) -> None:
        super().__init__(f"{len(problems)} problems")
        self.problems = problems


class InvalidConfigError(ConfigError):
    """A config problem; `field` names the (first) offending field, or is None for the whole
    file; `problems` holds each problem when there are several."""

    def __init__(self, message: str, *, hint: str, field: str | None = None,
                 problems: list[InputProblem] | None = None) -> None:
        super().__init__(message, hint=hint, evidence={"field": field} if field else None)
        self.field = field
        self.problems = problems or []


def config_error(problem: InputProblem, *, source: str = CONFIG_PATH) -> InvalidConfigError:
    where = f"config field `{problem.field}` in {source}" if problem.field else source
    return InvalidConfigError(f"{where}: {problem.problem}", hint=problem.hint, field=problem.field,
                              problems=[problem])


def config_errors(problems: list[InputProblem], *, source: str = CONFIG_PATH) -> InvalidConfigError:
    """One error for one problem; for several, a message listing each with its fix."""
    if len(problems) == 1:
        return config_error(problems[0], source=source)
    listed = "\n".join(f"- {'config field `' + p.field + '`' if p.field else 'the file'}: "
                        f"{p.problem} "
                        f"(fix: {p.hint})" for p in problems)
    return InvalidConfigError(f"{source} has {len(problems)} problems:\n{listed}",
                              hint="fix each problem listed above", field=problems[0].field,
                              problems=problems)


def load_config(text: str | None, *, source: str = CONFIG_PATH) -> RepoConfig:
    """Read the repository config; no file, an empty file or only comments give the defaults."""
    if text is None or not text.strip():
        return RepoConfig()
    try:
        data = load_yaml_mapping(text, example="batch_size: 5", empty_ok=True)
    except InputProblem as problem:
        raise config_error(problem, source=source) from None
    valid = _field_keys()
    problems = unknown_keys(data, valid)  # every problem at once, not the first only
    try:
        config = RepoConfig.model_validate({k: v for k, v in data.items() if k in valid},
                                           context={"source": source})
    except ValidationError as exc:
        problems += problems_from_validation(exc, _examples())
    except InvalidConfigError as exc:
        problems += exc.problems
    if problems:
        raise config_errors(problems, source=source)
    return config
