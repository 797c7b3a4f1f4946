"""Recipe `llm`: a language model edits each batch following `instructions` (its spec rules
and its editor's factory; the editor and every other model part are beside it in llm/)."""

from __future__ import annotations

from jobs.inputs.recipes import RecipeRules
from jobs.inputs.sandboxing import SandboxPolicy
from jobs.inputs.spec import TaskSpec
from jobs.inputs.yaml_input import InputProblem
from jobs.ports import Sandbox
from jobs.recipes.base import Editor, RecipeDefinition
from jobs.recipes.llm_settings import LlmSettings, load_llm_settings

EXAMPLES = {"instructions": 'instructions: "Replace print() with the module logger."'}


def check(spec: TaskSpec) -> None:
    if not (spec.instructions or "").strip():
        hint = f"say what to change, e.g. `{EXAMPLES['instructions']}`"
        raise InputProblem("instructions", "is required by recipe llm", hint)


def make_editor(spec: TaskSpec, *, sandbox: Sandbox, policy: SandboxPolicy,
                llm: LlmSettings | None) -> Editor:
    # Imported here: the model client (openai) takes seconds to import, and every process that
    # imports `jobs` registers this recipe; only a process that runs an llm job needs it.
    from jobs.recipes.llm.editor import LlmEditor

    return LlmEditor(llm or load_llm_settings())


def finish_codemod(codemod: Editor, llm: LlmSettings | None) -> Editor:
    """`fallback: llm` of recipe command: the model finishes what the codemod left."""
    from jobs.recipes.llm.funnel import FunnelEditor  # openai, only where such a job runs

    return FunnelEditor(codemod, llm)


# A model answers differently each time: its batches are not replayed on a moved base.
RULES = RecipeRules(name="llm", check=check, fields=("instructions",), examples=EXAMPLES,
                    uses_model=True, summary='a language model, see "Language-model edits"')
RECIPE = RecipeDefinition(rules=RULES, editor=make_editor, fallback=finish_codemod)
