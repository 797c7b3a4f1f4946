"""Recipe parity: the loop and the features know a recipe by its properties, never its name.
A recipe registered as `deterministic` gets exactly the failure decisions and the recommended
answers `replace` gets (the failure gate at once, no retry recommended, the split of a failing
batch); the same recipe registered without the property gets what `llm` gets (its attempts
first). Driven through real local jobs on a real repository whose edit breaks a test."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import BaseModel, ConfigDict

from jobs.adapters.safe_paths import read_regular, write_regular
from jobs.inputs.recipes import RecipeRules
from jobs.inputs.spec import TaskSpec
from jobs.kernel.gates import gate_choices
from jobs.kernel.job import Job
from jobs.kernel.model import Gate
from jobs.ports import Sandbox
from jobs.recipes import Editor, EditRequest, EditResult, RecipeDefinition, register_recipe, unregister_recipe
from tests.kit.local_e2e import build_sample, config_text, issue, load_job, session


class TwinOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    twin_replace: str


class TwinEditor:
    """`replace`'s edit under another name: each `find` match becomes `twin_replace`."""

    name = "twin"

    def apply(self, request: EditRequest) -> EditResult:
        template = TwinOptions.model_validate(request.spec.options()).twin_replace
        changed = {}
        for rel in request.files:
            text = read_regular(request.worktree, rel).decode()
            new = text
            for pattern in request.spec.find:
                new = re.sub(pattern, template, new)
            if new != text:
                write_regular(request.worktree, rel, new.encode())
                changed[rel] = "replaced"
        return EditResult(summary=f"{len(changed)} files", file_summaries=changed)


def twin_editor(spec: TaskSpec, *, sandbox: Sandbox, policy: object, llm: object) -> Editor:
    return TwinEditor()


def twin(*, deterministic: bool) -> RecipeDefinition:
    return RecipeDefinition(rules=RecipeRules(name="twin", check=lambda spec: None,
                                              options=TwinOptions, deterministic=deterministic),
                            editor=twin_editor)


@pytest.fixture(params=[True, False], ids=["deterministic", "not-deterministic"])
def twin_recipe(request: pytest.FixtureRequest) -> Iterator[bool]:
    register_recipe(twin(deterministic=request.param))
    yield request.param
    unregister_recipe("twin")


def failed_job(root: Path, **spec: object) -> Job:
    """A job whose one-file batch of the broken module fails validation, run until it stops."""
    repo = build_sample(root, broken=True, config=config_text(batch_size=1, batches_per_milestone=9))
    task = issue(paths=["calc/beta/total.py"], **spec)
    session(repo).run(task, yes=True)
    return load_job(repo)


def decisions(job: Job) -> tuple[object, ...]:
    assert job.gate is not None and job.gate.kind is Gate.FAILURE
    (batch,) = [b for b in job.batches if b.attempts]
    choices = gate_choices(job, job.gate)
    return (len(batch.attempts), batch.consecutive_failures, choices.usage, choices.meaning,
            choices.others, bool(choices.why))


def test_a_deterministic_recipe_is_decided_as_replace_is(tmp_path: Path, twin_recipe: bool) -> None:
    replace = failed_job(tmp_path / "replace")
    llm_like_attempts = replace.config.max_failed_attempts
    twin_job = failed_job(tmp_path / "twin", recipe="twin", replace=None,
                          twin_replace="new_sum(")
    if twin_recipe:
        assert decisions(twin_job) == decisions(replace)
        assert len(twin_job.batches[0].attempts) == 1  # not retried: it would fail the same way
    else:
        assert decisions(twin_job) != decisions(replace)
        assert len(twin_job.batches[0].attempts) == llm_like_attempts  # its attempts first


def test_the_built_in_recipes_declare_what_they_are() -> None:
    from jobs.inputs.recipes import RECIPES

    properties = ("deterministic", "replayable", "may_change_nothing", "reports_findings",
                  "needs_environment", "uses_model")
    assert {name: tuple(p for p in properties if getattr(RECIPES[name], p))
            for name in ("replace", "command", "llm")} == {
        "replace": ("deterministic", "replayable"),
        "command": ("deterministic", "replayable", "may_change_nothing", "reports_findings",
                    "needs_environment"),
        "llm": ("uses_model",),
    }


ROOT = Path(__file__).resolve().parents[2]
RECIPE_NAME = re.compile(r"\bRecipe\.(REPLACE|COMMAND|LLM)\b"
                         r"|\.recipe\s*[!=]=\s*[\"'](replace|command|llm)[\"']")
# Where a recipe's name may be compared: the recipes' own folder, the spec that lists the
# built-in names, and the llm feature (the llm recipe's ties to the loop).
NAMES_MAY_APPEAR = ("jobs/recipes/", "jobs/inputs/spec.py", "jobs/features/llm/")


def test_no_code_outside_a_recipe_compares_recipe_names() -> None:
    found = []
    for path in sorted([*ROOT.joinpath("jobs").rglob("*.py"), *ROOT.joinpath("bot").rglob("*.py")]):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith(NAMES_MAY_APPEAR) or "/sample/" in rel:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if RECIPE_NAME.search(line):
                found.append(f"{rel}:{number}: {line.strip()}")
    assert found == []
