"""How problems of the repository config are reported: each with its field and fix, several
listed in one error (the config model and its checks are jobs/inputs/config.py)."""

from __future__ import annotations

from jobs.basics.errors import ConfigError
from jobs.inputs.yaml_input import InputProblem


class ConfigProblems(Exception):
    """Every problem the field checks found (raised inside the model validator)."""

    def __init__(self, problems: list[InputProblem]) -> None:
        super().__init__(f"{len(problems)} problems")
        self.problems = problems


class InvalidConfigError(ConfigError):
    """A config problem; `field` names the (first) offending field, or is None for the whole
    file; `problems` holds each problem when there are several."""

    def __init__(self, message: str, *, hint: str, field: str | None = None,
                 problems: list[InputProblem] | None = None) -> None:
        super().__init__(message, hint=hint, evidence={"field": field} if field else None)
        self.field = field
        self.problems = problems or []


def config_error(problem: InputProblem, *, source: str) -> InvalidConfigError:
    where = f"config field `{problem.field}` in {source}" if problem.field else source
    return InvalidConfigError(f"{where}: {problem.problem}", hint=problem.hint, field=problem.field,
                              problems=[problem])


def config_errors(problems: list[InputProblem], *, source: str) -> InvalidConfigError:
    """One error for one problem; for several, a message listing each with its fix."""
    if len(problems) == 1:
        return config_error(problems[0], source=source)
    listed = "\n".join(f"- {'config field `' + p.field + '`' if p.field else 'the file'}: "
                        f"{p.problem} "
                        f"(fix: {p.hint})" for p in problems)
    return InvalidConfigError(f"{source} has {len(problems)} problems:\n{listed}",
                              hint="fix each problem listed above", field=problems[0].field,
                              problems=problems)
