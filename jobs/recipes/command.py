"""Recipe `command`: a codemod named in `run`, run as argv through the sandbox over the
batch's files (`{files}`): its spec rules, its editor and the editor's factory."""

from __future__ import annotations

from dataclasses import replace

from pydantic import BaseModel, ConfigDict

from jobs.adapters.safe_paths import require_regular
from jobs.inputs.programs import program_name, split_command
from jobs.inputs.recipes import RecipeRules, registered
from jobs.inputs.sandboxing import SandboxPolicy
from jobs.inputs.spec import FILES_HINT, FILES_PLACEHOLDER, TaskSpec
from jobs.inputs.yaml_input import InputProblem, command_argv
from jobs.kernel.records import command_evidence
from jobs.ports import Sandbox
from jobs.recipes import FALLBACKS
from jobs.recipes.base import (
    CommandCancelled,
    EditError,
    Editor,
    EditRequest,
    EditResult,
    RecipeDefinition,
)
from jobs.recipes.llm_settings import LlmSettings

EXAMPLES = {"run": 'run: "ruff check --fix {files}"', "fallback": "fallback: llm",
            "changed_exit_codes": "changed_exit_codes: [1]"}


class CommandOptions(BaseModel):
    """The `command` recipe's own spec keys."""

    model_config = ConfigDict(extra="forbid", strict=True, use_attribute_docstrings=True)

    changed_exit_codes: list[int] = []
    """Recipe command: exit codes of `run` that mean it rewrote files rather than that it left
    findings (pyupgrade exits 1 when it rewrote a file), so the note says so; other non-zero
    exits are reported as they happened."""

# Exit codes that mean the program never really ran (not executable, not found).
_DID_NOT_RUN = frozenset({126, 127})


def check(spec: TaskSpec) -> None:
    if spec.run is None:
        raise InputProblem("run", "is required by recipe command", f"add `{EXAMPLES['run']}`")
    try:
        program = program_name(split_command(spec.run)[0])
    except ValueError:
        program = ""
    try:
        argv = command_argv(spec.run, allow_commands=[program])
    except InputProblem as bad:
        raise InputProblem("run", bad.problem, bad.hint) from None
    if FILES_PLACEHOLDER not in argv[1:]:
        raise InputProblem("run", "needs {files} as a separate argument", FILES_HINT)
    if spec.fallback is not None and spec.fallback not in registered():
        raise InputProblem("fallback", f"names recipe {spec.fallback}, which this installation "
                           "does not have", "remove `fallback` from the spec")
    if spec.fallback == "llm" and not (spec.instructions or "").strip():
        raise InputProblem("instructions", "is required by `fallback: llm` (what the model "
                           "should do with the codemod's residue)",
                           'e.g. `instructions: "Finish the migration the codemod started."`')


class CommandEditor:
    name = "command"

    def __init__(self, *, sandbox: Sandbox, policy: SandboxPolicy) -> None:
        self.sandbox = sandbox
        self.policy = policy

    def apply(self, request: EditRequest) -> EditResult:
        for rel in request.files:  # a link handed to the codemod is refused before it runs
            require_regular(request.worktree, rel)
        argv = request.spec.run_argv(list(request.files))
        policy = replace(request.policy or self.policy, writes_through=True)  # its writes are the edit
        result = self.sandbox.run(argv, cwd=request.worktree, policy=policy)
        if result.cancelled:
            raise CommandCancelled(result.summary())
        evidence = command_evidence(result)
        if result.timed_out or result.exit_code in _DID_NOT_RUN:
            raise EditError(
                f"the codemod {result.summary()}",
                hint="check the `run` command in the issue and that the program is installed",
                evidence={"command": evidence.model_dump(mode="json")},
            )
        # A codemod's non-zero exit (e.g. "fixed some, some remain") is evidence, not a verdict:
        # validation and the completion check decide.
        return EditResult(summary=f"ran `{evidence.display}` (exit {result.exit_code})",
                          commands=(evidence,))


def make_editor(spec: TaskSpec, *, sandbox: Sandbox, policy: SandboxPolicy,
                llm: LlmSettings | None) -> Editor:
    codemod = CommandEditor(sandbox=sandbox, policy=policy)
    if spec.fallback is None:
        return codemod
    # The named recipe's own way to finish a codemod's residue, as it registered it.
    finish = FALLBACKS.get(spec.fallback)
    if finish is None:
        raise EditError(f"`fallback: {spec.fallback}` names a recipe this installation lacks",
                        hint="remove `fallback` from the spec")
    return finish(codemod, llm)


RULES = RecipeRules(name="command", check=check, fields=("run", "fallback"), examples=EXAMPLES,
                    options=CommandOptions,
                    deterministic=True, replayable=True, may_change_nothing=True,
                    reports_findings=True, needs_environment=True,
                    summary="a codemod you name in `run`")
RECIPE = RecipeDefinition(rules=RULES, editor=make_editor)
