"""The `Stepwise config` check run (pure): `.github/stepwise.yml` as a push left it, valid or
not, with every problem as `stepwise check-config` prints it and each as an annotation on the
config file at its line (the field's line, or the line a YAML error names)."""

from __future__ import annotations

import re

from jobs.basics import markdown_safe as md
from jobs.basics.errors import BadInputError
from jobs.basics.github_limits import ANNOTATIONS_PER_RUN
from jobs.inputs.config import CONFIG_PATH, load_config
from jobs.inputs.config_errors import InvalidConfigError
from jobs.inputs.yaml_input import InputProblem
from jobs.notes.annotations import Annotation
from jobs.notes.check_runs import CheckRunDraft

CONFIG_CHECK = "Stepwise config"
CONFIG_CHECK_ID = "stepwise-config"
_LINE = re.compile(r"\bline (\d+)\b")
_KEY = re.compile(r"^(\s*)(?:-\s+)?([^\s:#'\"]+|'[^']*'|\"[^\"]*\")\s*:")


def field_line(text: str, field: str | None) -> int:
    """The 1-based line of `field` (`ci.wait`: `wait:` under `ci:`) in the YAML `text`; 1 when
    it is not written there (a missing field, or the whole file)."""
    if not field:
        return 1
    lines = text.splitlines()
    start, indent, found = 0, -1, 0
    for part in field.split("."):
        for index in range(start, len(lines)):
            match = _KEY.match(lines[index])
            if match is None:
                continue
            depth = len(match.group(1))
            if found and depth <= indent:
                return found  # left the parent's block: the parent is the closest line
            if match.group(2).strip("'\"") == part and (indent < 0 or depth > indent):
                start, indent, found = index + 1, depth, index + 1
                break
        else:
            return found or 1
    return found or 1


def problem_line(text: str, problem: InputProblem) -> int:
    """Where one problem is: the line a YAML error names, else its field's line."""
    named = _LINE.search(problem.problem)
    if problem.field is None and named is not None:  # YAML may name the line after the last
        return max(1, min(int(named.group(1)), len(text.splitlines())))
    return field_line(text, problem.field)


def config_check_run(text: str | None, sha: str, *, details_url: str = "") -> CheckRunDraft:
    """The check run for the config at commit `sha` (None: no config file, so the defaults)."""
    def draft(conclusion: str, title: str, summary: str,
              notes: tuple[Annotation, ...] = ()) -> CheckRunDraft:
        return CheckRunDraft(name=CONFIG_CHECK, head_sha=sha, external_id=CONFIG_CHECK_ID,
                             status="completed", conclusion=conclusion, title=title,
                             summary=summary, annotations=notes, details_url=details_url)

    try:
        load_config(text)
    except BadInputError as exc:
        problems = exc.problems if isinstance(exc, InvalidConfigError) else []
        problems = problems or [InputProblem(None, exc.message, exc.hint)]
        notes = tuple(Annotation(path=CONFIG_PATH, line=problem_line(text or "", p),
                                 message=f"{p.problem} (fix: {p.hint})",
                                 title=f"`{p.field}`" if p.field else CONFIG_PATH)
                      for p in problems[:ANNOTATIONS_PER_RUN])
        count = f"{len(problems)} problem{'' if len(problems) == 1 else 's'}"
        # The problems quote the config's own text: rendered as data, like every renderer.
        return draft("failure", f"{CONFIG_PATH}: {count}",
                     f"{md.message(exc.message)}\n\nFix: {md.message(exc.hint)}\n\nCheck it "
                     "before pushing with `stepwise check-config`.", notes)
    what = "valid" if text is not None else "absent, so every default applies"
    return draft("success", f"{CONFIG_PATH} is {what}", f"{CONFIG_PATH} is {what}.")
