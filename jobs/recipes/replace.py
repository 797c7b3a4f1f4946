"""Recipe `replace`: each `find` pattern substituted with the `replace` template, per match
(its spec rules, its editor and the editor's factory)."""

from __future__ import annotations

import re

from jobs.adapters.safe_paths import read_regular, write_regular
from jobs.inputs.recipes import RecipeRules
from jobs.inputs.sandboxing import SandboxPolicy
from jobs.inputs.spec import TaskSpec
from jobs.inputs.yaml_input import InputProblem
from jobs.ports import Sandbox
from jobs.recipes.base import EditError, Editor, EditRequest, EditResult, RecipeDefinition
from jobs.recipes.llm_settings import LlmSettings

EXAMPLES = {"replace": "replace: 'log.info('"}
FIND_EXAMPLE = "find: ['\\bprint\\(']"


def substituted(text: str, patterns: list[re.Pattern[str]], template: str) -> tuple[str, int]:
    """`text` with every pattern's matches replaced by the template, and how many there were."""
    count = 0
    for pattern in patterns:
        text, made = pattern.subn(template, text)
        count += made
    return text, count


def preview(text: str, spec: TaskSpec) -> str:
    """The edit of one file's text, in this process (a campaign's sample diff)."""
    patterns = [re.compile(pattern, re.MULTILINE) for pattern in spec.find]
    return substituted(text, patterns, spec.replace or "")[0]


def check(spec: TaskSpec) -> None:
    if not spec.find:
        raise InputProblem("find", "is required by recipe replace", f"add `{FIND_EXAMPLE}`")
    if spec.replace is None:
        hint = f"add the re.sub template, e.g. `{EXAMPLES['replace']}`"
        raise InputProblem("replace", "is required by recipe replace", hint)
    for i, pattern in enumerate(spec.find):
        try:
            # Substituting into "" still compiles the template against the pattern's groups.
            re.compile(pattern).sub(spec.replace, "")
        except (re.error, IndexError) as exc:
            problem = f"is not a valid template for find[{i}]: {exc}"
            hint = r"use only groups the pattern has (\1, \g<name>); a backslash is \\"
            raise InputProblem("replace", problem, hint) from None


class ReplaceEditor:
    name = "replace"
    writes_only_request_files = True  # in this process, nothing else (jobs/engine/attempt.py)

    def apply(self, request: EditRequest) -> EditResult:
        template = request.spec.replace or ""
        patterns = [re.compile(pattern, re.MULTILINE) for pattern in request.spec.find]
        file_summaries: dict[str, str] = {}
        total = 0
        for rel in request.files:
            # A link, a special file or a symlinked parent is refused (UnsafePathError), never
            # followed: this runs in Stepwise's own process, outside the sandbox.
            try:
                text = read_regular(request.worktree, rel).decode("utf-8")  # line ends kept
            except UnicodeDecodeError as exc:
                raise EditError(
                    f"cannot read {rel} as UTF-8 text: {exc}",
                    hint="exclude the file from `paths` or convert it to UTF-8",
                ) from exc
            text, count = substituted(text, patterns, template)
            if count:
                write_regular(request.worktree, rel, text.encode("utf-8"))
                file_summaries[rel] = f"{count} replacement{'s' if count != 1 else ''}"
                total += count
        summary = f"{total} replacement{'s' if total != 1 else ''} in {len(file_summaries)} file" \
            f"{'s' if len(file_summaries) != 1 else ''}"
        return EditResult(summary=summary, file_summaries=file_summaries)


def make_editor(spec: TaskSpec, *, sandbox: Sandbox, policy: SandboxPolicy,
                llm: LlmSettings | None) -> Editor:
    return ReplaceEditor()


RULES = RecipeRules(name="replace", check=check, fields=("replace",), examples=EXAMPLES,
                    deterministic=True, replayable=True, preview=preview,
                    summary="a regex substitution")
RECIPE = RecipeDefinition(rules=RULES, editor=make_editor)
