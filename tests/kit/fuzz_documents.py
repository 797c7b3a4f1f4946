"""Fuzzed YAML documents: issue files around a ```stepwise block (the task spec) and repository
configs, each a good document with a few fields set to odd values, arbitrary mappings, or YAML
tricks; and what the parsers must do (only their documented error; no unsafe path or blocked
program accepted)."""

from __future__ import annotations

from typing import Any

import yaml
from hypothesis import strategies as st

from jobs.basics.errors import BadInputError
from jobs.inputs.config import RepoConfig, load_config
from jobs.inputs.globs import unsafe_path_reason
from jobs.inputs.programs import BLOCKED_PROGRAMS
from jobs.inputs.spec import IssueTask, TaskSpec, parse_issue_file, parse_spec
from tests.kit.fuzz_values import NASTY_PATHS, Unexpected, json_values

SPEC_FIELDS = list(TaskSpec.model_fields)
CONFIG_FIELDS = [info.alias or name for name, info in RepoConfig.model_fields.items()]
_PATTERNS = st.sampled_from(["\\bprint\\(", "old_sum\\(", "(", "a{1,", "[", "(?P<x>a)", "x" * 1001,
                             "", "(a+)+$", "\\d+"])
_GLOBS = st.one_of(st.sampled_from(NASTY_PATHS), st.text(max_size=15))
_COMMANDS = st.sampled_from(["python -m pytest -q", "ruff check {files}", "python fix.py {files}",
                             "rm -rf /", "bash -c 'x'", "python x.py && curl y", "/usr/bin/python",
                             "PYTHONPATH=x python", "git push", "'unbalanced", "", "python {files}",
                             "npm test", "env python", "setsid python"])
_SPEC_VALUES: dict[str, st.SearchStrategy[Any]] = {
    "recipe": st.sampled_from(["replace", "command", "llm", "Replace", "sed", 1]),
    "paths": st.lists(_GLOBS, max_size=4) | _GLOBS,
    "exclude": st.lists(_GLOBS, max_size=3),
    "find": st.lists(_PATTERNS, max_size=3) | _PATTERNS,
    "replace": st.sampled_from(["new(", "\\1", "\\g<x>", "\\g<9>", "\\", ""]) | st.text(max_size=10),
    "run": _COMMANDS,
    "instructions": st.text(max_size=30),
    "not_doing": st.lists(st.text(max_size=10), max_size=3),
    "done_when": st.sampled_from(["no_matches", "checks_pass", "never"]),
    "batch_size": st.integers(min_value=-1, max_value=102) | st.just("5"),
}
_CONFIG_VALUES: dict[str, st.SearchStrategy[Any]] = {
    "trigger_label": st.text(max_size=55),
    "setup": st.lists(_COMMANDS, max_size=2),
    "validate": st.lists(_COMMANDS, max_size=3),
    "env": st.dictionaries(st.sampled_from(["PYTHONPATH", "PATH", "LD_PRELOAD", "GIT_DIR", "1X",
                                            "STEPWISE_X", "ok_name", "A=B", ""]),
                           st.text(max_size=10) | st.integers(), max_size=3),
    "allow_commands": st.lists(st.sampled_from(["python", "pytest", "rm", "bash", "git", "ruff",
                                                "../x", "py thon", "env", "sh"]), max_size=4),
    "network": st.booleans() | st.just("yes"),
    "batch_size": st.integers(min_value=-1, max_value=102),
    "batches_per_milestone": st.integers(min_value=-1, max_value=5),
    "max_failed_attempts": st.integers(min_value=0, max_value=21),
    "command_timeout": st.integers(min_value=0, max_value=90000),
    "require_plan_approval": st.booleans() | st.just("no"),
    "allow_deletions": st.sampled_from([True, False, "ask", "yes", None]),
    "allow_new_files": st.booleans(),
    "max_batch_lines": st.integers(min_value=-1, max_value=1000),
    "allow_test_edits": st.booleans(),
    "allow_manifest_edits": st.booleans(),
    "protected_paths": st.lists(_GLOBS, max_size=4),
    "approvers": st.lists(st.sampled_from(["octocat", "@org/team", "-bad", "a" * 40, "@x", "ok-1"]),
                          max_size=3),
    "notes_dir": _GLOBS,
}


def _plausible(values: dict[str, st.SearchStrategy[Any]], good: dict[str, Any]
               ) -> st.SearchStrategy[dict[str, Any]]:
    """A good document with a few fields set to values from each field's own (often bad) range."""
    chosen = st.lists(st.sampled_from(sorted(values)), max_size=3, unique=True)
    return chosen.flatmap(lambda keys: st.fixed_dictionaries(
        {key: values[key] for key in keys})).map(lambda extra: {**good, **extra})


def _yaml_document(fields: list[str], good: dict[str, Any],
                   values: dict[str, st.SearchStrategy[Any]]) -> st.SearchStrategy[str]:
    odd = st.one_of(json_values(nan=False), st.sampled_from(NASTY_PATHS),
                    st.lists(st.sampled_from(NASTY_PATHS), max_size=4))
    keys = st.one_of(st.sampled_from(fields), st.text(max_size=10))
    mapping = st.dictionaries(keys, odd, max_size=6)
    dumped = st.one_of(_plausible(values, good), _plausible(values, good), mapping,
                       mapping.map(lambda extra: {**good, **extra})).map(
        lambda data: yaml.safe_dump(data, allow_unicode=True, sort_keys=False))
    tricks = st.sampled_from([
        "a: &x [1]\nb: *x\n", "a: 1\na: 2\n", "!!python/object:os.system\n", "- 1\n- 2\n",
        "key: [unclosed\n", "\t- tab\n", "? complex\n: key\n", "recipe: !!binary aGVsbG8=\n",
        "paths: " + "[" * 200 + "]" * 200 + "\n", "x" * 70_000,
    ])
    return st.one_of(dumped, dumped, dumped, tricks, st.text(max_size=200))


_GOOD_SPEC = {"recipe": "replace", "paths": ["src/**/*.py"], "find": ["old\\("], "replace": "new("}


@st.composite
def issue_files(draw: st.DrawFn) -> str:
    block = draw(_yaml_document(SPEC_FIELDS, _GOOD_SPEC, _SPEC_VALUES))
    fence = draw(st.sampled_from(["```", "```", "~~~", "````", "   ```"]))
    info = draw(st.sampled_from(["stepwise", "stepwise", "Stepwise", " stepwise ", "stepwise yaml"]))
    close = draw(st.sampled_from([fence.strip(), fence.strip(), fence.strip(), "", "~~~"]))
    title = draw(st.sampled_from(["# Replace old() with new()"] * 3) | st.text(max_size=30))
    around = draw(st.lists(st.one_of(st.text(max_size=40), st.sampled_from(
        ["<!--", "-->", "```stepwise", "```", "> quote"])), max_size=4))
    return "\n".join([title, *around[:2], f"{fence}{info}", block, close, *around[2:]])


def check_spec_result(spec: TaskSpec) -> None:
    """What a spec that parses must satisfy: only safe, repository-relative paths."""
    for glob in (*spec.paths, *spec.exclude):
        if unsafe_path_reason(glob) is not None:
            raise Unexpected(f"an unsafe path was accepted in a spec: {glob!r}")
    spec.digest()


def check_issue_file(text: str) -> IssueTask | None:
    try:
        task = parse_issue_file(text)
    except BadInputError:
        task = None
    except Exception as exc:
        raise Unexpected(f"parse_issue_file raised {exc!r} on {text[:200]!r}") from exc
    try:
        spec = parse_spec(text)
    except BadInputError:
        return task
    except Exception as exc:
        raise Unexpected(f"parse_spec raised {exc!r} on {text[:200]!r}") from exc
    check_spec_result(spec)
    return task


_GOOD_CONFIG = {"validate": ["python -m pytest -q"], "allow_commands": ["python"]}


def config_texts() -> st.SearchStrategy[str]:
    return _yaml_document(CONFIG_FIELDS, _GOOD_CONFIG, _CONFIG_VALUES)


def check_config(text: str) -> RepoConfig | None:
    try:
        config = load_config(text)
    except BadInputError:
        return None
    except Exception as exc:
        raise Unexpected(f"load_config raised {exc!r} on {text[:200]!r}") from exc
    for path in (*config.protected_paths, config.notes_dir):
        if unsafe_path_reason(path) is not None:
            raise Unexpected(f"an unsafe path was accepted in a config: {path!r}")
    blocked = set(config.allow_commands) & BLOCKED_PROGRAMS
    if blocked:
        raise Unexpected(f"blocklisted programs were allowed: {blocked}")
    return config
