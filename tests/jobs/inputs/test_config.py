"""The repository config: DESIGN.md defaults, every validation rule, and the YAML edge cases."""

from __future__ import annotations

import pytest

from jobs.basics.errors import BadInputError, ConfigError
from jobs.inputs.ci_config import CiConfig
from jobs.inputs.config import (
    CONFIG_PATH,
    RepoConfig,
    load_config,
)
from jobs.inputs.config_errors import InvalidConfigError
from jobs.inputs.evidence_config import EvidenceConfig, GatesConfig
from jobs.inputs.llm_config import LlmConfig

DESIGN_DEFAULTS = {
    "trigger_label": "stepwise",
    "campaign_label": "stepwise-campaign",
    "setup": [],
    "validate_commands": ["python -m pytest -q", "ruff check ."],
    "env": {},
    "allow_commands": ["pytest", "python", "ruff", "mypy", "make", "npm", "tox"],
    "network": False,
    "network_allow": [],
    "cache_key": [],
    "ci": CiConfig(wait="per_milestone", checks=[], timeout=60),
    "llm": LlmConfig(edit_format=None, restate_every=None),
    "evidence": EvidenceConfig(coverage="auto", min_changed_coverage=None),  # issue 39
    "gates": GatesConfig(auto_approve_known_shapes=False),
    "batch_size": 5,
    "batch_size_max": 16,  # with `batch_size: auto` (DESIGN, "Split batches")
    "batches_per_milestone": 4,
    "max_failed_attempts": 2,
    "command_timeout": 600,
    "require_plan_approval": True,
    "allow_deletions": False,
    "allow_new_files": False,
    "max_batch_lines": 400,
    "allow_test_edits": False,
    "allow_manifest_edits": False,
    "protected_paths": [".github/**", ".env*", "**/*.pem", "**/secrets/**"],
    "approvers": [],
    "notes_dir": "docs/agent-changes",
    "signoff": False,  # issue 41.8: local commits end with Signed-off-by when true
    "notes": "at_end",  # issue 26: per_milestone also commits the note at each milestone
    "commit_via": "api",  # issue 24: commits GitHub signs (server mode; local mode uses git)
    "llm_drafts": False,  # beyond DESIGN's list: the opt-in for drafted specs (issue 5)
    "update_from_base": "conflicted",
}


@pytest.mark.parametrize(
    "text",
    [None, "", "  \n\n", "# nothing configured yet\n# batch_size: 3\n", "---\n", "~\n"],
    ids=["missing", "empty", "blank", "comments", "empty-document", "null"],
)
def test_no_settings_give_the_design_defaults(text: str | None) -> None:
    config = load_config(text)
    assert config == RepoConfig()
    for key, value in DESIGN_DEFAULTS.items():
        assert getattr(config, key) == value, key


def test_every_field_is_covered_by_the_defaults_table() -> None:
    keys = {info.alias or name for name, info in RepoConfig.model_fields.items()}
    assert keys == (set(DESIGN_DEFAULTS) - {"validate_commands"}) | {"validate"}


def test_argvs_are_split() -> None:
    config = load_config("setup: ['python -m pip install -e \"src/my pkg\"']\n")
    assert config.setup_argvs() == [["python", "-m", "pip", "install", "-e", "src/my pkg"]]
    assert config.validate_argvs() == [["python", "-m", "pytest", "-q"], ["ruff", "check", "."]]


def test_full_config_round_trips() -> None:
    text = """
trigger_label: refactor-bot
setup: ["make deps"]
validate: ["tox -e py311", "mypy src"]
env: {PYTHONPATH: src, LANG: "C.UTF-8"}
allow_commands: [tox, mypy, make, g++]
network: true
batch_size: 10
batches_per_milestone: 1
max_failed_attempts: 20
command_timeout: 86400
require_plan_approval: false
allow_deletions: ask
allow_new_files: true
max_batch_lines: 1
allow_test_edits: true
allow_manifest_edits: true
protected_paths: ["infra/**"]
approvers: [octocat, "@my-org/platform-team", a-b-c]
notes_dir: notes/changes
"""
    config = load_config(text)
    assert config.validate_commands == ["tox -e py311", "mypy src"]
    assert config.allow_deletions == "ask"
    assert config.env == {"PYTHONPATH": "src", "LANG": "C.UTF-8"}
    assert config.approvers == ["octocat", "@my-org/platform-team", "a-b-c"]
    assert RepoConfig.model_validate(config.model_dump(by_alias=True)) == config
    assert RepoConfig(validate_=[]).validate_commands == []
    assert load_config("validate: []").validate_argvs() == []


@pytest.mark.parametrize(("value", "expected"), [("true", True), ("false", False), ("ask", "ask")])
def test_allow_deletions_values(value: str, expected: object) -> None:
    assert load_config(f"allow_deletions: {value}").allow_deletions == expected


def test_model_is_frozen() -> None:
    with pytest.raises(ValueError, match="frozen"):
        RepoConfig().batch_size = 3  # type: ignore[misc]


@pytest.mark.parametrize(
    ("text", "field", "fragment"),
    [
        ("batch_size: [", None, "line 1"),
        ("a: 1\n  b: 2", None, "line 2"),
        ("- batch_size: 3", None, "a list, not a mapping"),
        ("just words", None, "a string, not a mapping"),
        ("base: &b [pytest]\nvalidate: *b", None, "aliases"),
        ("network: true\nnetwork: false", None, "`network` appears twice"),
        ("# " + "x" * (64 * 1024), None, "64 KiB"),
        ("batch_szie: 3", "batch_szie", "unknown field"),
        ("validate_: []", "validate_", "unknown field"),
        ("true: 1", "True", "unknown field"),
        ("batch_size: '5'", "batch_size", "expected a whole number, got a string"),
        ("batch_size: 5.0", "batch_size", "got a decimal number"),
        ("batch_size: true", "batch_size", "got true/false"),
        ("batch_size: 0", "batch_size", "at least 1"),
        ("batch_size: 101", "batch_size", "at most 100"),
        ("batches_per_milestone: 0", "batches_per_milestone", "at least 1"),
        ("max_failed_attempts: 0", "max_failed_attempts", "at least 1"),
        ("max_failed_attempts: 21", "max_failed_attempts", "at most 20"),
        ("command_timeout: 0", "command_timeout", "at least 1"),
        ("command_timeout: 86401", "command_timeout", "at most 86400"),
        ("max_batch_lines: 0", "max_batch_lines", "at least 1"),
        ("network: 'no'", "network", 'expected true, false or "setup"'),
        ("network: SETUP", "network", '"setup"'),
        ("network_allow: ['pypi.org/simple']", "network_allow[0]", "not a host name"),
        ("network_allow: ['http://pypi.org']", "network_allow[0]", "not a host name"),
        ("cache_key: ['../secrets']", "cache_key[0]", ".."),
        ("require_plan_approval: 1", "require_plan_approval", "expected true or false"),
        ("allow_deletions: maybe", "allow_deletions", '"ask"'),
        ("allow_deletions: 1", "allow_deletions", '"ask"'),
        ("allow_deletions: ASK", "allow_deletions", '"ask"'),
        ("trigger_label: ''", "trigger_label", "must not be empty"),
        ("trigger_label: " + "x" * 51, "trigger_label", "longer than 50"),
        ("trigger_label: 7", "trigger_label", "expected a string"),
        ("setup: 5", "setup", "expected a list"),
        ("validate: {pytest: 1}", "validate", "expected a list"),
        ("validate: [pytest, 3]", "validate[1]", "expected a string"),
        ("validate: [pytest, 'rm -rf build']", "validate[1]", "blocklist"),
        ("validate: ['gcc -o x x.c']", "validate[0]", "not on allow_commands"),
        ("validate: ['./run-tests.sh']", "validate[0]", "is a path"),
        ("validate: ['pytest && ruff check .']", "validate[0]", "`&&`"),
        ("validate: ['pytest | tee log']", "validate[0]", "`|`"),
        ("validate: ['PYTHONPATH=src pytest']", "validate[0]", "environment assignment"),
        ("validate: ['pytest \"unclosed']", "validate[0]", "No closing quotation"),
        ("validate: ['   ']", "validate[0]", "empty"),
        ("setup: ['curl -o x https://example.com']", "setup[0]", "blocklist"),
        ("setup: ['pip install .']", "setup[0]", "not on allow_commands"),
        ("allow_commands: [rm]\nvalidate: []", "allow_commands[0]", "`rm` is on the built-in"),
        ("allow_commands: [pytest, bash]", "allow_commands[1]", "cannot be allowed"),
        ("allow_commands: [/usr/bin/pytest]", "allow_commands[0]", "not a program name"),
        ("allow_commands: ['my tool']", "allow_commands[0]", "not a program name"),
        ("allow_commands: ['']", "allow_commands[0]", "not a program name"),
        ("allow_commands: [ruff]", "validate[0]", "`python` is not on allow_commands"),
        ("env: [PYTHONPATH]", "env", "expected a mapping"),
        ("env: {DEBUG: 1}", "env.DEBUG", "expected a string, got a whole number"),
        ("env: {DEBUG: true}", "env.DEBUG", "expected a string, got true/false"),
        ("env: {DEBUG: null}", "env.DEBUG", "expected a string, got null"),
        ("env: {'1X': a}", "env.1X", "not a valid variable name"),
        ("env: {'A-B': a}", "env.A-B", "not a valid variable name"),
        ("env: {PATH: /opt/bin}", "env.PATH", "reserved"),
        ("env: {HOME: /tmp}", "env.HOME", "reserved"),
        ("env: {https_proxy: x}", "env.https_proxy", "reserved"),
        ("env: {GITHUB_TOKEN: x}", "env.GITHUB_TOKEN", "reserved"),
        ("env: {STEPWISE_JOB: x}", "env.STEPWISE_JOB", "reserved"),
        ("env: {GIT_DIR: x}", "env.GIT_DIR", "reserved"),
        ("env: {LD_PRELOAD: x}", "env.LD_PRELOAD", "reserved"),
        ('env: {A: "a\\0b"}', "env.A", "NUL"),
        ("protected_paths: [ok/**, /etc/**]", "protected_paths[1]", "absolute"),
        ("protected_paths: ['../**']", "protected_paths[0]", "`..`"),
        ("protected_paths: ['']", "protected_paths[0]", "empty"),
        ("notes_dir: /tmp/notes", "notes_dir", "absolute"),
        ("notes_dir: ../notes", "notes_dir", "`..`"),
        ("notes_dir: .git/notes", "notes_dir", ".git"),
        ("notes_dir: 'docs/*'", "notes_dir", "glob"),
        ("approvers: ['@octocat']", "approvers[0]", "neither a login"),
        ("approvers: [octocat, 'two words']", "approvers[1]", "neither a login"),
        ("approvers: ['-bad']", "approvers[0]", "neither a login"),
        ("approvers: ['a--b']", "approvers[0]", "neither a login"),
        ("approvers: ['" + "a" * 40 + "']", "approvers[0]", "neither a login"),
        ("approvers: ['@org/']", "approvers[0]", "neither a login"),
        ("approvers: ['org/team']", "approvers[0]", "neither a login"),
        ("approvers: 7", "approvers", "expected a list"),
    ],
)
def test_each_rule_names_the_field_and_hints(text: str, field: str | None, fragment: str) -> None:
    with pytest.raises(InvalidConfigError) as caught:
        load_config(text)
    error = caught.value
    assert isinstance(error, ConfigError)
    assert isinstance(error, BadInputError)
    assert error.code == "invalid_config"
    assert error.field == field
    if field is not None:  # alone, or the first of several problems (each is listed)
        assert f"config field `{field}` in {CONFIG_PATH}:" in error.message or \
            (error.message.startswith(f"{CONFIG_PATH} has ") and \
            f"\n- config field `{field}`: " in error.message)
        assert error.evidence == {"field": field}
    else:
        assert error.message.startswith(f"{CONFIG_PATH}: ")
    assert fragment in error.message
    assert error.hint.strip()


@pytest.mark.parametrize(
    ("text", "hint_fragment"),
    [
        ("batch_szie: 3", "did you mean `batch_size`?"),
        ("validate_: []", "did you mean `validate`?"),
        ("env: {DEBUG: 1}", "quote the value"),
        ("batch_size: '5'", "batch_size: 5"),
        ("validate: ['gcc x']", "add `gcc` to allow_commands"),
        ("validate: ['PYTHONPATH=src pytest']", "env:"),
        ("validate: ['pytest && ruff check .']", "own entry"),
    ],
)
def test_hints_say_how_to_fix(text: str, hint_fragment: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(text)
    assert hint_fragment in caught.value.hint


def test_source_is_named_in_messages() -> None:
    with pytest.raises(ConfigError, match=r"config field `validate\[0\]` in local.yml:"):
        load_config("validate: ['rm -rf .']", source="local.yml")
    with pytest.raises(ConfigError, match=r"config field `batch_size` in local.yml:"):
        load_config("batch_size: x", source="local.yml")


def test_direct_construction_is_checked_too() -> None:
    with pytest.raises(InvalidConfigError, match=r"`validate\[0\]`"):
        RepoConfig(validate_=["rm -rf /"])


def test_versioned_python_passes_the_allowlist() -> None:
    config = load_config("validate: ['python3.11 -m pytest']")
    assert config.validate_argvs() == [["python3.11", "-m", "pytest"]]


def test_every_problem_of_a_config_is_reported_at_once() -> None:
    text = ("batch_sise: 5\nmax_failed_attempts: 0\nallow_commands: [pytest, bash]\n"
            "validate: ['pytest -q']\nenv: {PATH: /opt/bin}\napprovers: ['@octocat']\n")
    with pytest.raises(InvalidConfigError) as caught:
        load_config(text)
    message = caught.value.message
    assert message.startswith(f"{CONFIG_PATH} has 2 problems:")  # types first: unknown + range
    assert "`batch_sise`: unknown field" in message and "did you mean `batch_size`" in message
    assert "`max_failed_attempts`: must be at least 1" in message
    with pytest.raises(InvalidConfigError) as caught:
        load_config(text.replace("batch_sise: 5\nmax_failed_attempts: 0\n", ""))
    error = caught.value
    assert error.message.startswith(f"{CONFIG_PATH} has 3 problems:")
    for field in ("allow_commands[1]", "env.PATH", "approvers[0]"):
        assert f"\n- config field `{field}`: " in error.message
    assert [p.field for p in error.problems] == ["allow_commands[1]", "env.PATH", "approvers[0]"]
    assert error.field == "allow_commands[1]"


@pytest.mark.parametrize(("text", "setup", "commands"), [
    ("network: false", False, False), ("network: setup", True, False),
    ("network: true", True, True)])
def test_network_modes_say_who_may_reach_the_proxy(text: str, setup: bool, commands: bool) -> None:
    config = load_config(text + "\nnetwork_allow: ['pypi.org', '*.pythonhosted.org', 'h:8443']"
                         "\ncache_key: ['requirements*.txt']")
    assert (config.setup_network, config.command_network) == (setup, commands)
    assert config.network_allow == ["pypi.org", "*.pythonhosted.org", "h:8443"]
