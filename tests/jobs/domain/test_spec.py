"""The task spec: fenced-block extraction, every validation rule, digest and run_argv."""

from __future__ import annotations

import textwrap

import pytest

from jobs.domain.errors import BadInputError, SpecError
from jobs.domain.spec import (
    DoneWhen,
    InvalidSpecError,
    IssueTask,
    Recipe,
    TaskSpec,
    extract_spec_block,
    parse_issue,
    parse_issue_file,
    parse_spec,
)

REPLACE = "recipe: replace\npaths: ['src/**/*.py']\nfind: ['\\bprint\\(']\nreplace: 'log.info('"
COMMAND = "recipe: command\npaths: ['src/**/*.py']\nrun: ruff check --fix {files}"
LLM = "recipe: llm\npaths: ['src/**/*.py']\ninstructions: Use the module logger."


def body(yaml_text: str, *, fence: str = "```", info: str = "stepwise") -> str:
    return f"Please do this.\n\n{fence}{info}\n{yaml_text}\n{fence}\n\nThanks!\n"


def spec_error(yaml_text: str) -> InvalidSpecError:
    with pytest.raises(InvalidSpecError) as caught:
        parse_spec(body(yaml_text))
    return caught.value


# --- valid specs ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("yaml_text", "expected"),
    [
        (
            REPLACE,
            {
                "recipe": Recipe.REPLACE,
                "find": [r"\bprint\("],
                "replace": "log.info(",
                "done_when": DoneWhen.NO_MATCHES,
                "run": None,
                "instructions": None,
            },
        ),
        (
            COMMAND,
            {
                "recipe": Recipe.COMMAND,
                "find": [],
                "run": "ruff check --fix {files}",
                "done_when": DoneWhen.CHECKS_PASS,
                "replace": None,
            },
        ),
        (
            COMMAND + "\nfind: 'Optional\\['",
            {"find": [r"Optional\["], "done_when": DoneWhen.NO_MATCHES},
        ),
        (
            LLM,
            {
                "recipe": Recipe.LLM,
                "instructions": "Use the module logger.",
                "done_when": DoneWhen.CHECKS_PASS,
            },
        ),
        (
            REPLACE + "\ndone_when: checks_pass\nbatch_size: 3\nexclude: [src/vendor/**]"
            "\nnot_doing: [refactor unrelated code]",
            {
                "done_when": DoneWhen.CHECKS_PASS,
                "batch_size": 3,
                "exclude": ["src/vendor/**"],
                "not_doing": ["refactor unrelated code"],
            },
        ),
        (
            "recipe: replace\npaths: [a.py]\nfind: ['(?P<x>a)(b)']\nreplace: '\\g<x>\\2\\g<0>'",
            {"replace": r"\g<x>\2\g<0>"},
        ),
        (
            "recipe: replace\npaths: [a.py]\nfind: [x]\nreplace: ''",
            {"replace": "", "batch_size": None, "exclude": [], "not_doing": []},
        ),
    ],
    ids=["replace", "command", "command-find", "llm", "all-fields", "group-refs", "empty-replace"],
)
def test_valid_specs_round_trip_with_defaults(yaml_text: str, expected: dict[str, object]) -> None:
    spec = parse_spec(body(yaml_text))
    for key, value in expected.items():
        assert getattr(spec, key) == value, key
    assert TaskSpec.model_validate(spec.model_dump()) == spec


def test_model_is_frozen_and_forbids_extra() -> None:
    spec = parse_spec(body(LLM))
    with pytest.raises(ValueError, match="frozen"):
        spec.recipe = Recipe.COMMAND  # type: ignore[misc]
    with pytest.raises(InvalidSpecError, match="`surprise`: unknown field"):
        TaskSpec.model_validate({**spec.model_dump(), "surprise": 1})


def test_direct_construction_is_checked_too() -> None:
    with pytest.raises(InvalidSpecError, match="`run`"):
        TaskSpec(recipe=Recipe.COMMAND, paths=["a"], run="ruff check")


def test_done_when_default_depends_on_find() -> None:
    with_find = TaskSpec(recipe=Recipe.REPLACE, paths=["a"], find=["x"], replace="y")
    assert with_find.done_when is DoneWhen.NO_MATCHES
    without = TaskSpec(recipe=Recipe.LLM, paths=["a"], instructions="do it")
    assert without.done_when is DoneWhen.CHECKS_PASS


# --- every error rule ----------------------------------------------------------------------

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
        ("recipe: llm\ninstructions: x\npaths: src", "paths", "expected a list, got a string"),
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
        (LLM + "\nnot_doing: nothing", "not_doing", "expected a list"),
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


# --- the fence -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("markdown", "expected"),
    [
        (body("a: 1"), "a: 1"),
        (body("a: 1", fence="~~~"), "a: 1"),
        (body("a: 1", fence="````"), "a: 1"),
        (body("a: 1", info="Stepwise  "), "a: 1"),
        (body("a: 1", info=" stepwise"), "a: 1"),
        ("```yaml\nb: 2\n```\n```stepwise\na: 1\n```\n", "a: 1"),
        ("````markdown\n```stepwise\nb: 2\n```\n````\n```stepwise\na: 1\n```", "a: 1"),
        ("~~~\n```stepwise\nb: 2\n```\n~~~\n```stepwise\na: 1\n```", "a: 1"),
        ("<!--\n```stepwise\nb: 2\n```\n-->\n```stepwise\na: 1\n```", "a: 1"),
        ("```stepwise\na: 1\n~~~\n```\n", "a: 1\n~~~"),
        ("````stepwise\na: 1\n```\n````\n", "a: 1\n```"),
        ("  ```stepwise\n  a:\n    - 1\n  ```\n", "a:\n  - 1"),
        ("```stepwise\r\na: 1\r\n```\r\n", "a: 1"),
    ],
    ids=[
        "backticks",
        "tildes",
        "four-backticks",
        "case-and-trailing-space",
        "leading-space",
        "yaml-fence-ignored",
        "nested-in-markdown-fence",
        "nested-in-tilde-fence",
        "html-comment-ignored",
        "other-char-does-not-close",
        "shorter-fence-does-not-close",
        "indented-fence",
        "crlf",
    ],
)
def test_fence_extraction(markdown: str, expected: str) -> None:
    assert extract_spec_block(markdown) == expected


@pytest.mark.parametrize(
    ("markdown", "fragment"),
    [
        ("No spec here.", "no ```stepwise block was found"),
        ("```yaml\nrecipe: llm\n```", "no ```stepwise block was found"),
        ("```markdown\n```stepwise\na: 1\n```\n```", "no ```stepwise block was found"),
        ("    ```stepwise\n    a: 1\n    ```", "no ```stepwise block was found"),
        ("```stepwise yaml\na: 1\n```", "no ```stepwise block was found"),
        ("> ```stepwise\n> a: 1\n> ```", "no ```stepwise block was found"),
        ("```stepwise\na: 1\n", "never closed"),
        ("````stepwise\na: 1\n```\n", "never closed"),
        (body("a: 1") + body("b: 2"), "found 2 ```stepwise blocks"),
        (body("a: 1") + body("b: 2", fence="~~~"), "found 2 ```stepwise blocks"),
    ],
    ids=[
        "none",
        "yaml-only",
        "inside-unclosed-fence",
        "indented-code",
        "extra-info-word",
        "quoted",
        "unterminated",
        "unterminated-longer",
        "two-blocks",
        "two-mixed",
    ],
)
def test_fence_errors(markdown: str, fragment: str) -> None:
    with pytest.raises(InvalidSpecError) as caught:
        extract_spec_block(markdown)
    assert fragment in caught.value.message
    assert caught.value.field is None
    assert caught.value.hint.strip()


def test_missing_block_hint_shows_a_minimal_example() -> None:
    with pytest.raises(SpecError) as caught:
        parse_spec("Just prose.")
    assert "```stepwise\nrecipe: replace\npaths:" in caught.value.hint


# --- digest and run_argv -------------------------------------------------------------------


def test_digest_is_stable_and_tracks_every_field() -> None:
    spec = parse_spec(body(REPLACE))
    same = parse_spec(
        "Other prose.\n" + body("# reordered\n" + "\n".join(reversed(REPLACE.splitlines())))
    )
    assert spec.digest() == same.digest()
    assert len(spec.digest()) == 64
    assert int(spec.digest(), 16) >= 0
    for change in [
        "\nbatch_size: 2",
        "\nexclude: [b]",
        "\nnot_doing: [x]",
        "\ndone_when: checks_pass",
    ]:
        assert parse_spec(body(REPLACE + change)).digest() != spec.digest(), change
    assert parse_spec(body(REPLACE.replace("log.info(", "log.debug("))).digest() != spec.digest()


@pytest.mark.parametrize(
    ("run", "files", "expected"),
    [
        (
            "ruff check --fix {files}",
            ["a.py", "b c.py"],
            ["ruff", "check", "--fix", "a.py", "b c.py"],
        ),
        ("python -m tool {files} --quiet", ["x.py"], ["python", "-m", "tool", "x.py", "--quiet"]),
        ("tool '{files}' {files}", ["-n.py"], ["tool", "./-n.py", "./-n.py"]),
        ("tool --x='a b' {files}", ["f"], ["tool", "--x=a b", "f"]),
    ],
)
def test_run_argv_expands_files(run: str, files: list[str], expected: list[str]) -> None:
    spec = TaskSpec(recipe=Recipe.COMMAND, paths=["**"], run=run)
    assert spec.run_argv(files) == expected


def test_run_argv_misuse() -> None:
    command = parse_spec(body(COMMAND))
    with pytest.raises(ValueError, match="non-empty"):
        command.run_argv([])
    with pytest.raises(ValueError, match="non-empty"):
        command.run_argv("a.py")
    with pytest.raises(ValueError, match="no `run`"):
        parse_spec(body(LLM)).run_argv(["a.py"])


# --- issues --------------------------------------------------------------------------------


def test_parse_issue_keeps_title_body_and_block() -> None:
    task = parse_issue("  Use logging  ", body(REPLACE))
    assert isinstance(task, IssueTask)
    assert task.title == "Use logging"
    assert task.body == body(REPLACE)
    assert task.spec_text == REPLACE
    assert task.spec == parse_spec(body(REPLACE))


def test_parse_issue_needs_a_title() -> None:
    with pytest.raises(InvalidSpecError) as caught:
        parse_issue("  ", body(REPLACE))
    assert caught.value.field == "title"
    assert caught.value.hint


@pytest.mark.parametrize(
    ("text", "title"),
    [
        ("# Use logging\n" + body(LLM), "Use logging"),
        ("\ufeff\n\n# Use logging ##\n" + body(LLM), "Use logging"),
        ("#\tUse  logging  \r\n" + body(LLM), "Use  logging"),
    ],
)
def test_parse_issue_file(text: str, title: str) -> None:
    task = parse_issue_file(text)
    assert task.title == title
    assert task.spec.recipe is Recipe.LLM
    assert not task.body.startswith("#")


@pytest.mark.parametrize(
    "text",
    [
        "",
        "Use logging\n" + body(LLM),
        "## Use logging\n" + body(LLM),
        "#\n" + body(LLM),
        "#Use logging\n" + body(LLM),
        "# ##\n" + body(LLM),
    ],
    ids=["empty", "no-heading", "level-two", "empty-heading", "no-space", "only-hashes"],
)
def test_parse_issue_file_needs_a_heading(text: str) -> None:
    with pytest.raises(InvalidSpecError) as caught:
        parse_issue_file(text)
    assert caught.value.field == "title"
    assert "`# Title`" in caught.value.message
    assert caught.value.hint


def test_parse_issue_file_reports_spec_problems() -> None:
    with pytest.raises(InvalidSpecError, match="`paths`"):
        parse_issue_file("# Goal\n" + body("recipe: llm\ninstructions: x"))


def test_dedent_of_indented_blocks_is_limited_to_the_fence_indent() -> None:
    text = textwrap.dedent(
        """\
          ~~~stepwise
        recipe: llm
           paths: [a]
          ~~~
        """
    )
    assert extract_spec_block(text) == "recipe: llm\n paths: [a]"
