"""The recipe registry (jobs/inputs/recipes.py, filled by jobs/recipes/__init__.py's
`install_recipes`): a toy recipe defined in this one module and registered with one line
parses, is checked, shows in the plan and carries a real local job to completion; a spec read
before any recipe is installed fails naming the fix, and the spec key reference names every
built-in recipe's keys. (Which process installs them: tests/jobs/test_composition.py.)"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import BaseModel, ConfigDict, Field

from jobs.adapters.safe_paths import read_regular, write_regular
from jobs.composition import BUILT_IN
from jobs.inputs.recipes import RECIPES, RecipeRules, RecipesNotRegisteredError, register
from jobs.inputs.spec import InvalidSpecError, Recipe, TaskSpec, parse_spec
from jobs.inputs.yaml_input import InputProblem
from jobs.kernel.model import JobStatus
from jobs.ports import Publication, Sandbox
from jobs.recipes import (
    EDITORS,
    Editor,
    EditRequest,
    EditResult,
    RecipeDefinition,
    register_recipe,
    unregister_recipe,
)
from tests.kit.local_e2e import Recorder, assert_exit, build_sample, issue, load_job, session
from tests.kit.repos import git


class UpperOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    upper_words: list[str] = Field(min_length=1)
    rename_to: dict[str, str] = {}  # written instead of a word, where given


def check_upper(spec: TaskSpec) -> None:
    if not spec.find:
        raise InputProblem("find", "is required by recipe upper", "add `find` patterns")


class UpperEditor:
    """Writes each `find` match that is one of `upper_words` in capitals (or as `rename_to`
    says)."""

    name = "upper"

    def apply(self, request: EditRequest) -> EditResult:
        options = UpperOptions.model_validate(request.spec.options())
        words, renames = set(options.upper_words), options.rename_to
        patterns = [re.compile(p) for p in request.spec.find]
        changed = {}
        for rel in request.files:
            text = read_regular(request.worktree, rel).decode()
            new = text
            for pattern in patterns:
                new = pattern.sub(lambda m: renames.get(m[0], m[0].upper()) if m[0] in words else m[0], new)
            if new != text:
                write_regular(request.worktree, rel, new.encode())
                changed[rel] = "capitalised"
        return EditResult(summary=f"{len(changed)} files", file_summaries=changed)


def upper_editor(spec: TaskSpec, *, sandbox: Sandbox, policy: object, llm: object) -> Editor:
    return UpperEditor()


UPPER = RecipeDefinition(
    rules=RecipeRules(name="upper", check=check_upper, options=UpperOptions,
                      examples={"upper_words": "upper_words: [todo]"}),
    editor=upper_editor,
)


@pytest.fixture
def upper() -> Iterator[None]:
    register_recipe(UPPER)  # the one line a new recipe adds (to BUILT_IN, in jobs/composition.py)
    yield
    unregister_recipe("upper")


SPEC = "```stepwise\nrecipe: upper\npaths: [a.py]\nfind: ['todo']\nupper_words: [todo]\n```"


def test_the_built_in_recipes_are_registered_with_their_keys() -> None:
    # Another built-in recipe adds itself to BUILT_IN only (no `Recipe` member, nothing here).
    assert set(EDITORS) == set(RECIPES) == {recipe.rules.name for recipe in BUILT_IN} >= set(Recipe)
    assert {name: RECIPES[name].keys for name in Recipe} == {
        "replace": ("replace",), "command": ("run", "fallback", "changed_exit_codes"),
        "llm": ("instructions",)}
    assert {name: RECIPES[name].replayable for name in Recipe} == {
        "replace": True, "command": True, "llm": False}


def test_the_spec_key_reference_names_every_built_in_recipes_keys() -> None:
    from jobs.inputs.key_docs import spec_table

    table = spec_table()  # the docs site's "Task spec keys" page (scripts/docs_reference.py)
    for recipe in BUILT_IN:
        for key in recipe.rules.keys:
            assert f"| `{key}` |" in table, f"the spec key reference lacks `{key}`"
        assert f"`{recipe.rules.name}`" in table  # the `recipe` row names it


def test_reading_a_spec_with_no_recipe_registered_fails_loudly_naming_the_fix(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("jobs.inputs.recipes.RECIPES", {})
    with pytest.raises(RecipesNotRegisteredError,
                       match=r"no recipe is registered.*`jobs\.composition\.install\(\)`"):
        parse_spec(SPEC)


def test_a_registered_recipe_parses_with_its_own_options(upper: None) -> None:
    spec = parse_spec(SPEC)
    assert spec.recipe == "upper" and spec.options() == {"upper_words": ["todo"]}
    assert TaskSpec.model_validate(spec.model_dump()) == spec  # a stored record reads back
    assert parse_spec(SPEC.replace("[todo]", "[fixme]")).digest() != spec.digest()


@pytest.mark.parametrize(("text", "message"), [
    (SPEC.replace("upper_words: [todo]\n", ""), "`upper_words`: is required"),
    (SPEC.replace("upper_words: [todo]", "upper_words: []"), "upper_words"),
    (SPEC.replace("find: ['todo']\n", ""), "`find`: is required by recipe upper"),
    (SPEC.replace("upper_words", "uper_words"), "did you mean `upper_words`"),
    (SPEC.replace("recipe: upper", "recipe: replace\nreplace: x"),
     "`upper_words`: is only used by recipe upper"),
])
def test_a_registered_recipe_checks_its_spec(upper: None, text: str, message: str) -> None:
    with pytest.raises(InvalidSpecError, match=re.escape(message)):
        parse_spec(text)


def test_an_unregistered_recipe_is_refused_naming_the_registered_ones() -> None:
    names = [f"'{name}'" for name in RECIPES]
    expected = f"`recipe`: must be one of {', '.join(names[:-1])} or {names[-1]}"
    with pytest.raises(InvalidSpecError, match=re.escape(expected)):
        parse_spec(SPEC.replace("upper_words: [todo]\n", ""))


def test_a_name_or_key_cannot_be_registered_twice(upper: None) -> None:
    with pytest.raises(ValueError, match="registered twice"):
        register(RecipeRules(name="upper", check=check_upper))
    with pytest.raises(ValueError, match="already belongs to 'replace'"):
        register(RecipeRules(name="other", check=check_upper, fields=("replace",)))
    with pytest.raises(ValueError, match="already has an editor"):
        register_recipe(UPPER)


def test_a_toy_recipe_runs_a_real_local_job_to_completion(upper: None, tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo")
    # Capitals would break the callers (the real validation refuses them): rename instead.
    task = issue(recipe="upper", replace=None, find=["old_sum"], upper_words=["old_sum"],
                 rename_to={"old_sum": "new_sum"})
    sink = Recorder()
    outcome = session(repo, sink=sink).run(task, yes=True)
    assert_exit(outcome, 0)
    (plan,) = sink.texts(Publication.PLAN)
    assert "upper" in plan and "old_sum" in plan
    job = load_job(repo)
    assert job.status is JobStatus.COMPLETED
    assert job.spec.options() == {"upper_words": ["old_sum"], "rename_to": {"old_sum": "new_sum"}}
    assert job.batches and all(batch.commit for batch in job.batches)
    edited = [path for batch in job.batches for path in batch.file_summaries]
    assert edited and all("legacy.new_sum(" in git(repo, "show", f"{job.head_sha}:{path}")
                          for path in edited)


def test_a_fallback_naming_a_recipe_this_installation_lacks_is_refused_at_plan_time(
        monkeypatch: pytest.MonkeyPatch) -> None:
    text = ("```stepwise\nrecipe: command\npaths: [a.py]\nrun: 'pyupgrade {files}'\n"
            "fallback: llm\ninstructions: finish it\n```")
    assert parse_spec(text).fallback == "llm"  # the llm recipe registers itself as a fallback
    monkeypatch.delitem(RECIPES, "llm")  # an installation composed without recipe llm
    with pytest.raises(InvalidSpecError, match=re.escape(
            "`fallback`: names recipe llm, which this installation does not have")):
        parse_spec(text)
