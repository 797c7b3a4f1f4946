"""Reading an issue body's one ```stepwise (or ~~~stepwise) fenced block, and the spec errors
that name the offending field (the spec's model is jobs/inputs/spec.py)."""

from __future__ import annotations

import re

from jobs.basics.errors import SpecError
from jobs.inputs.yaml_input import InputProblem

MINIMAL_EXAMPLE = """```stepwise
recipe: replace
paths: ["src/**/*.py"]
find: ['\\bprint\\(']
replace: 'log.info('
```"""
_OPEN = re.compile(r"(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})(?P<info>.*)")


class InvalidSpecError(SpecError):
    """A spec problem; `field` names the offending field, or is None for the block itself."""

    def __init__(self, message: str, *, hint: str, field: str | None = None,
                 problems: list[InputProblem] | None = None) -> None:
        super().__init__(message, hint=hint, evidence={"field": field} if field else None)
        self.field = field
        self.problems = problems or []


def spec_error(problem: InputProblem) -> InvalidSpecError:
    where = f"spec field `{problem.field}`" if problem.field else "the ```stepwise block"
    return InvalidSpecError(f"{where}: {problem.problem}", hint=problem.hint, field=problem.field,
                            problems=[problem])


def spec_errors(problems: list[InputProblem]) -> InvalidSpecError:
    """One error for one problem; for several, one message listing each with its fix (like the
    config's), so a spec is fixed in one go rather than one run per problem."""
    if len(problems) == 1:
        return spec_error(problems[0])
    listed = "\n".join(f"- {'spec field `' + p.field + '`' if p.field else 'the block'}: "
                        f"{p.problem} (fix: {p.hint})" for p in problems)
    return InvalidSpecError(f"the ```stepwise block has {len(problems)} problems:\n{listed}",
                            hint="fix each problem listed above", field=problems[0].field,
                            problems=problems)


def _closes(line: str, char: str, length: int) -> bool:
    return re.fullmatch(rf" {{0,3}}{re.escape(char)}{{{length},}}[ \t]*", line) is not None


Fence = tuple[str, int, int, bool, int]  # its character, length, indent, is_spec and line


def _spec_blocks(markdown: str) -> tuple[list[tuple[int, str]], Fence | None]:
    """Every closed ```stepwise block (its first line and its text), and the fence left open at
    the end (None when every fence closed)."""
    blocks: list[tuple[int, str]] = []
    fence: Fence | None = None
    body: list[str] = []
    in_comment = False  # an HTML comment (issue templates keep examples there) hides fences
    for number, line in enumerate(re.split(r"\r\n|\r|\n", markdown), start=1):
        if in_comment or (fence is None and re.match(r" {0,3}<!--", line)):
            in_comment = "-->" not in (line.split("<!--", 1)[1] if not in_comment else line)
        elif fence is None:
            match = _OPEN.fullmatch(line)
            if match is None or (match["fence"][0] == "`" and "`" in match["info"]):
                continue
            is_spec = match["info"].strip().lower() == "stepwise"
            fence = (match["fence"][0], len(match["fence"]), len(match["indent"]), is_spec, number)
            body = []
        elif _closes(line, fence[0], fence[1]):
            if fence[3]:
                blocks.append((fence[4], "\n".join(body)))
            fence = None
        elif fence[3]:
            indent = len(line) - len(line.lstrip(" "))
            body.append(line[min(indent, fence[2]) :])
    return blocks, fence


def has_spec_block(markdown: str) -> bool:
    """Whether `markdown` opens a ```stepwise block, read as `extract_spec_block` reads it (one
    left open counts: reading it names the missing fence; one in an HTML comment does not)."""
    blocks, fence = _spec_blocks(markdown)
    return bool(blocks) or (fence is not None and fence[3])


def extract_spec_block(markdown: str) -> str:
    """The raw YAML of the one ```stepwise (or ~~~stepwise) fenced block in `markdown`."""
    blocks, fence = _spec_blocks(markdown)
    if fence is not None and fence[3]:
        closing = fence[0] * fence[1]
        problem = f"the block opened at line {fence[4]} is never closed"
        raise spec_error(InputProblem(None, problem, f"end it with a line holding only {closing}"))
    if not blocks:
        hint = f"add a fenced block whose info string is `stepwise`, e.g.\n{MINIMAL_EXAMPLE}"
        raise InvalidSpecError("no ```stepwise block was found in the issue body", hint=hint)
    if len(blocks) > 1:
        lines = ", ".join(str(start) for start, _ in blocks)
        problem = f"found {len(blocks)} ```stepwise blocks (at lines {lines}); there must be one"
        raise spec_error(InputProblem(None, problem, "merge them into a single block"))
    return blocks[0][1]
