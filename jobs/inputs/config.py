"""The repository config `.github/stepwise.yml`: every key, its default and the checks the
types cannot make (the YAML reading it shares with the task spec is jobs/inputs/yaml_input.py,
how its problems are reported jobs/inputs/config_errors.py)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Literal, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from jobs.inputs.batch_sizes import BatchSize
from jobs.inputs.ci_config import CiConfig
from jobs.inputs.config_errors import (
    ConfigProblems,
    InvalidConfigError,
    config_error,
    config_errors,
)
from jobs.inputs.evidence_config import EvidenceConfig, GatesConfig
from jobs.inputs.globs import unsafe_path_reason
from jobs.inputs.llm_config import LlmConfig
from jobs.inputs.programs import BLOCKED_PROGRAMS, split_command
from jobs.inputs.yaml_input import (
    InputProblem,
    command_argv,
    load_yaml_mapping,
    problems_from_validation,
    unknown_keys,
    yaml_kind,
)

CONFIG_PATH = ".github/stepwise.yml"

AllowDeletions = bool | Literal["ask"]
UpdateFromBase = Literal["conflicted", "behind", "never"]
NotesCadence = Literal["per_milestone", "at_end"]
NetworkMode = bool | Literal["setup"]  # false: none; "setup": setup only; true: every command
CommitVia = Literal["api", "git"]

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
_CONFIG_EXAMPLES = {
    "setup": 'setup: ["python -m pip install -e ."]',
    "env": 'env: {PYTHONPATH: "src"}',
    "approvers": 'approvers: ["octocat", "@my-org/maintainers"]',
    "network": "network: setup",
    "network_allow": 'network_allow: ["pypi.org", "*.pythonhosted.org"]',
    "cache_key": 'cache_key: ["requirements*.txt", "package-lock.json"]',
    "ci": "ci: {wait: per_milestone, checks: [\"tests\"], timeout: 60}",
    "llm": "llm: {edit_format: search_replace, restate_every: 8}",
    "evidence": "evidence: {coverage: auto, min_changed_coverage: 80}",
    "gates": "gates: {auto_approve_known_shapes: true}",
}


class RepoConfig(BaseModel):
    """`.github/stepwise.yml`: every field and its default (the README shows an example)."""

    # Each field's docstring is its documentation: the docs' key reference is generated from it.
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True, populate_by_name=True,
                              use_attribute_docstrings=True)

    trigger_label: str = Field(default="stepwise", min_length=1, max_length=50)
    """The issue label that starts a job (server mode)."""
    campaign_label: str = Field(default="stepwise-campaign", min_length=1, max_length=50)
    """The issue label that starts a campaign from this (control) repository (server mode)."""
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
    the registries of the ecosystems the repository holds (PyPI for Python files, the npm
    registry for `package.json`) and the package indexes configured in it or where Stepwise runs
    (pip/uv index URLs, npm registry); the plan names each host and why."""
    cache_key: list[str] = []
    """Globs of files whose content, with `setup`, keys the cached environment (e.g.
    `requirements*.txt`, `package-lock.json`): a change rebuilds it."""
    ci: CiConfig = CiConfig()
    """The repository's own CI as a verifier (server mode): `wait`, `checks`, `timeout`, one row
    each below."""
    llm: LlmConfig = LlmConfig()
    """How the model edits batches (recipe `llm`): `edit_format`, `restate_every`, one row each
    below."""
    evidence: EvidenceConfig = EvidenceConfig()
    """What each batch's evidence measures besides green: `coverage`, `min_changed_coverage`,
    one row each below."""
    gates: GatesConfig = GatesConfig()
    """Gates that may pass on their own: `auto_approve_known_shapes`, below."""
    batch_size: BatchSize = 5
    """Files per batch (a spec's `batch_size` overrides it), or `auto`: start at 2, double
    after each passing batch, halve after a failure, up to `batch_size_max`."""
    batch_size_max: int = Field(default=16, ge=1, le=100)
    """With `batch_size: auto`, the most files a batch may grow to."""
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
    """Who may answer gates (server mode): only these logins and `@org/team` members, who need
    write access too; empty: everyone with write."""
    notes_dir: str = "docs/agent-changes"
    """Where the change notes are committed."""
    notes: NotesCadence = "at_end"
    """When the change note is committed: `at_end`, one note commit when the job ends (the PR
    body carries the running account meanwhile); `per_milestone`, also one at each milestone
    and after each revert (with `ci.wait: per_milestone` it is pushed before CI runs, so the
    milestone gate's head is the commit whose CI ran)."""
    llm_drafts: bool = False
    """Server mode: a labelled issue without a `stepwise` block gets a spec drafted by the
    model, shown for approval."""
    commit_via: CommitVia = "api"
    """Server mode: how commits reach the job branch: `api` (GitHub's Git Data API with the
    installation token: GitHub signs them, "Verified") or `git` (pushed with git: unsigned, so
    refused at plan time where the base branch requires signed commits). Local mode always
    commits with git."""
    signoff: bool = False
    """Local mode: end every commit Stepwise makes (batches, notes, reverts, base merges) with
    `Signed-off-by: <name> <email>` of the git identity it commits as (as `git commit -s`), for
    a DCO check. Server mode's commits are the App's and carry none."""
    update_from_base: UpdateFromBase = "conflicted"
    """When the base branch moves, merge it into the job branch (a validated merge commit, never
    a rebase): `conflicted` only when the pull request would conflict, `behind` whenever the base
    has new commits (or its protection requires up-to-date branches), `never`."""

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

    @field_validator("setup", "validate_", "allow_commands", "network_allow", "cache_key",
                     "protected_paths", "approvers", mode="before")
    @classmethod
    def _one_string(cls, value: object) -> object:
        """A single string where a list goes is a list of that one string."""
        return [value] if isinstance(value, str) else value

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
