"""The task spec model (jobs/inputs/spec.py): valid specs per recipe with their defaults, a
frozen model that forbids extra keys, the digest, and `run_argv`."""

from __future__ import annotations

import pytest

from jobs.inputs.spec import DoneWhen, InvalidSpecError, Recipe, TaskSpec, parse_spec
from tests.jobs.inputs.spec_kit import COMMAND, LLM, REPLACE, body

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
