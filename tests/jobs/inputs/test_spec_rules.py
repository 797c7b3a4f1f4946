"""Every validation rule of the task spec (jobs/inputs/spec.py): each error names the field and
gives a hint; an unknown key suggests the close match; oversized or deeply nested blocks are
refused, not crashing."""

from __future__ import annotations

import pytest

from jobs.basics.errors import BadInputError, SpecError
from tests.jobs.inputs.spec_kit import COMMAND, LLM, REPLACE, spec_error

BIG_FIND = "\n".join(["recipe: llm", "paths: [a]", "instructions: x", "find:"] + ["- a"] * 51)
BIG_PATHS = "recipe: llm\ninstructions: x\npaths: [" + ", ".join(["a"] * 201) + "]"
BIG_EXCLUDE = "recipe: llm\ninstructions: x\npaths: [a]\nexclude: [" + ", ".join(["a"] * 201) + "]"
BIG_NOT_DOING = LLM + "\nnot_doing: [" + ", ".join(["x"] * 51) + "]"


@pytest.mark.parametrize(
    ("yaml_text", "field", "fragment"),
    [
        ("recipe: llm\npaths: [a\n", None, "line 3"),
        ("- recipe: llm", None, "a list, not a mapping"),
        ("just text", None, "a string, not a mapping"),
        ("", None, "empty"),
        ("# only a comment", None, "empty"),
        ("a: &x 1\nb: *x", None, "aliases"),
        (LLM + "\npaths: [b]", None, "`paths` appears twice"),
        (LLM + "\ninstruction: x", "instruction", "unknown field"),
        (LLM + "\nfnd: [x]", "fnd", "unknown field"),
        ("paths: [a]\ninstructions: x", "recipe", "is required"),
        ("recipe: sed\npaths: [a]", "recipe", "must be one of 'replace', 'command'"),  # then any other
        ("recipe: llm\ninstructions: x", "paths", "is required"),
        ("recipe: llm\ninstructions: x\npaths: 5", "paths", "expected a list, got a whole number"),
        ("recipe: llm\ninstructions: x\npaths: []", "paths", "is empty"),
        ("recipe: llm\ninstructions: x\npaths: [a, 3]", "paths[1]", "expected a string"),
        ("recipe: llm\ninstructions: x\npaths: [a, /etc/passwd]", "paths[1]", "absolute"),
        ("recipe: llm\ninstructions: x\npaths: ['../x']", "paths[0]", "`..`"),
        ("recipe: llm\ninstructions: x\npaths: ['.git/config']", "paths[0]", ".git"),
        (LLM + "\nexclude: [ok, '../up']", "exclude[1]", "`..`"),
        (BIG_PATHS, "paths", "at most 200"),
        (BIG_EXCLUDE, "exclude", "at most 200"),
        (BIG_FIND, "find", "at most 50"),
        (LLM + "\nfind: ['" + "a" * 1001 + "']", "find[0]", "longer than 1000"),
        (BIG_NOT_DOING, "not_doing", "at most 50"),
        (LLM + "\nfind: [ok, '(']", "find[1]", "position 0"),
        (LLM + "\nfind: [ok, '']", "find[1]", "is empty"),
        (LLM + "\nfind: {a: b}", "find", "expected a list"),
        (LLM + "\nbatch_size: 0", "batch_size", "at least 1"),
        (LLM + "\nbatch_size: 101", "batch_size", "at most 100"),
        (LLM + "\nbatch_size: '5'", "batch_size", "expected a whole number, got a string"),
        (LLM + "\nbatch_size: true", "batch_size", "got true/false"),
        (LLM + "\ndone_when: always", "done_when", "'no_matches' or 'checks_pass'"),
        (LLM + "\ndone_when: no_matches", "done_when", "needs `find`"),
        (LLM + "\nnot_doing: 3", "not_doing", "expected a list"),
        ("recipe: replace\npaths: [a]\nreplace: x", "find", "required by recipe replace"),
        ("recipe: replace\npaths: [a]\nfind: [x]", "replace", "required by recipe replace"),
        ("recipe: replace\npaths: [a]\nfind: ['(a)']\nreplace: '\\3'", "replace", "group"),
        ("recipe: replace\npaths: [a]\nfind: [a, '(a)']\nreplace: '\\1'", "replace", "find[0]"),
        ("recipe: replace\npaths: [a]\nfind: ['(a)']\nreplace: '\\q'", "replace", "bad escape"),
        ("recipe: replace\npaths: [a]\nfind: ['(a)']\nreplace: '\\g<nm>'", "replace", "nm"),
        (REPLACE + "\nrun: ruff {files}", "run", "only used by recipe command"),
        (REPLACE + "\ninstructions: x", "instructions", "only used by recipe llm"),
        (COMMAND + "\nreplace: x", "replace", "only used by recipe replace"),
        (LLM + "\nrun: ruff {files}", "run", "only used by recipe command"),
        ("recipe: command\npaths: [a]", "run", "required by recipe command"),
        ("recipe: command\npaths: [a]\nrun: ruff check --fix", "run", "{files}"),
        ("recipe: command\npaths: [a]\nrun: ruff --files={files}", "run", "separate argument"),
        ("recipe: command\npaths: [a]\nrun: '{files}'", "run", "{files}"),
        ("recipe: command\npaths: [a]\nrun: 'ruff \"{files}'", "run", "No closing quotation"),
        ("recipe: command\npaths: [a]\nrun: '  '", "run", "empty"),
        ("recipe: command\npaths: [a]\nrun: rm -f {files}", "run", "blocklist"),
        ("recipe: command\npaths: [a]\nrun: sh -c 'x {files}'", "run", "blocklist"),
        ("recipe: command\npaths: [a]\nrun: /usr/bin/ruff {files}", "run", "is a path"),
        ("recipe: command\npaths: [a]\nrun: ruff {files} && rm x", "run", "`&&`"),
        ("recipe: command\npaths: [a]\nrun: X=1 ruff {files}", "run", "environment"),
        ("recipe: command\npaths: [a]\nrun: [ruff, '{files}']", "run", "expected a string"),
        ("recipe: llm\npaths: [a]", "instructions", "required by recipe llm"),
        ("recipe: llm\npaths: [a]\ninstructions: '   '", "instructions", "required by recipe llm"),
        ("recipe: llm\npaths: [a]\ninstructions: 5", "instructions", "expected a string"),
    ],
)
def test_each_rule_names_the_field_and_hints(
    yaml_text: str, field: str | None, fragment: str
) -> None:
    error = spec_error(yaml_text)
    assert isinstance(error, SpecError)
    assert isinstance(error, BadInputError)
    assert error.field == field
    if field is not None:
        assert f"spec field `{field}`" in error.message
        assert error.evidence == {"field": field}
    assert fragment in error.message
    assert error.hint.strip()


def test_unknown_key_suggests_the_close_match() -> None:
    error = spec_error(LLM + "\ninstruction: x")
    assert "did you mean `instructions`?" in error.hint
    assert "not_doing" in error.hint


def test_missing_files_placeholder_hint() -> None:
    error = spec_error("recipe: command\npaths: [a]\nrun: ruff check --fix")
    assert "put {files} where the batch's file paths go" in error.hint


def test_oversized_block_is_refused() -> None:
    error = spec_error(LLM + "\n# " + "x" * (64 * 1024))
    assert "64 KiB" in error.message
    assert error.hint


def test_deep_nesting_is_refused_not_crashing() -> None:
    error = spec_error("paths: " + "[" * 5000)
    assert error.field is None
    assert error.hint
