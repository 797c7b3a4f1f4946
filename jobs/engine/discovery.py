"""Discovery: the job's scope at a commit, and its `find` matches, read through the `Workspace`
port with git's help (no I/O of its own).

`git grep -F` on a literal that every match must contain picks the few files worth reading;
Python's `re` then finds the exact lines, so the result is the same as scanning every file.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from jobs.basics.errors import SpecError
from jobs.decisions.plan import (
    ScopeRules,
    find_targets,
    nothing_matches_words,
    select_scope,
    split_scope,
)
from jobs.inputs.config import RepoConfig
from jobs.inputs.spec import TaskSpec
from jobs.kernel.records import LeftOut
from jobs.ports import Workspace

MIN_LITERAL = 3  # shorter literals filter too little to be worth a grep


def never_in_scope(config: RepoConfig) -> list[str]:
    """Paths no job may touch: the protected ones and the change notes."""
    return [*config.protected_paths, f"{config.notes_dir.rstrip('/')}/**"]


def scope_at(repo: Workspace, sha: str, spec: TaskSpec, config: RepoConfig) -> list[str]:
    return select_scope(repo.tracked_files(sha), paths=spec.paths, exclude=spec.exclude,
                        never=never_in_scope(config))


def plan_scope(repo: Workspace, sha: str, spec: TaskSpec,
               config: RepoConfig) -> tuple[list[str], list[LeftOut]]:
    """The files batches may edit at `sha`, and the files of `paths` left out with their rule
    (with `find`, only those that match: a left-out file without a target is no news).

    Raises SpecError when nothing is left to edit: such a plan could never succeed.
    """
    rules = ScopeRules(protected_paths=tuple(config.protected_paths),
                       allow_test_edits=config.allow_test_edits,
                       allow_manifest_edits=config.allow_manifest_edits)
    scope, refused = split_scope(repo.tracked_modes(sha), paths=spec.paths, exclude=spec.exclude,
                                 hidden=[f"{config.notes_dir.rstrip('/')}/**"], rules=rules)
    if not scope:
        raise empty_scope_error(spec, sha, refused)
    if spec.find and refused:
        found = targets_at(repo, sha, [path for path, _ in refused], spec.find)
        refused = [(path, rule) for path, rule in refused if path in found]
    return scope, [LeftOut(path=path, rule=rule) for path, rule in refused]


def empty_scope_error(spec: TaskSpec, sha: str, refused: list[tuple[str, str]]) -> SpecError:
    """Bad input naming `paths`, or the rules that left every matching file out."""
    globs = ", ".join(f"`{p}`" for p in spec.paths)
    if not refused:
        excluding = f" once `exclude` ({', '.join(spec.exclude)}) is applied" \
            if spec.exclude else ""
        return SpecError(
            f"spec field `paths` ({globs}) matches no tracked file at {sha[:7]}{excluding}",
            hint="check the globs against `git ls-files` (a typo?); `**` spans directories, "
                 "e.g. `src/**/*.py`, and a pattern without a slash matches the file name at "
                 "any depth")
    rules = sorted({rule for _, rule in refused})
    return SpecError(
        f"every file spec field `paths` ({globs}) matches is left out, so no batch could "
        f"change anything: {'; '.join(rules)}",
        hint="point `paths` at files the job may edit, or change the rule named above in "
             ".github/stepwise.yml (protected_paths, allow_test_edits, allow_manifest_edits)")


def nothing_matches_error(spec: TaskSpec, scope: Sequence[str], *, where: str,
                          not_made: str) -> SpecError:
    """Bad input: `find` matches nothing in scope, so a job would change nothing. Says what was
    searched (the patterns, `paths`, `exclude`) and where (`where`: the repository and commit),
    and what was not made (`not_made`: no branch, note or pull request)."""
    return SpecError(
        f"{nothing_matches_words(spec, len(scope), where)}; so no job was started: {not_made}",
        hint="check the patterns against the files (a regex like `\\bname\\(` needs its "
             "backslashes doubled inside double quotes in YAML; single quotes keep them), widen "
             "`paths`, or leave `find` out to batch every file in scope; if the change is "
             "already done, there is nothing left to do",
        code="nothing_matches")


def required_literal(pattern: str) -> str | None:
    """The longest run of plain characters every match of `pattern` contains, if any."""
    try:
        parsed = re._parser.parse(pattern)  # type: ignore[attr-defined]
    except (re.error, AttributeError, TypeError, RecursionError):
        return None
    if parsed.state.flags & (re.IGNORECASE | re.VERBOSE):
        return None
    runs, current = [], []
    for op, value in parsed.data:
        if str(op) == "LITERAL" and chr(value) != "\n":
            current.append(chr(value))
        else:
            runs.append("".join(current))
            current = []
    runs.append("".join(current))
    best = max(runs, key=len)
    return best if len(best) >= MIN_LITERAL else None


def contents_for_patterns(repo: Workspace, sha: str, scope: Sequence[str],
                          patterns: Sequence[str]) -> dict[str, str | None]:
    """The texts that may hold a match: only grep's candidates when every pattern has a
    required literal, else every file in scope."""
    literals = [required_literal(pattern) for pattern in patterns]
    if patterns and all(literals):
        candidates = repo.grep_files(sha, [lit for lit in literals if lit])
        if candidates is not None:
            wanted = set(candidates)
            return repo.read_texts(sha, [path for path in scope if path in wanted])
    return repo.read_texts(sha, scope)


def targets_at(repo: Workspace, sha: str, scope: Sequence[str],
               patterns: Sequence[str]) -> dict[str, tuple[int, ...]]:
    texts = contents_for_patterns(repo, sha, scope, patterns)
    return find_targets({p: t for p, t in texts.items() if t is not None}, patterns)
