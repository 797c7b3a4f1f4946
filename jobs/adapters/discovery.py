"""Discovery I/O: the job's scope at a commit, and its `find` matches, read with git's help.

`git grep -F` on a literal that every match must contain picks the few files worth reading;
Python's `re` then finds the exact lines, so the result is the same as scanning every file.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from jobs.adapters.workspace import Repository
from jobs.domain.config import RepoConfig
from jobs.domain.plan import find_targets, select_scope
from jobs.domain.spec import TaskSpec

MIN_LITERAL = 3  # shorter literals filter too little to be worth a grep


def never_in_scope(config: RepoConfig) -> list[str]:
    """Paths no job may touch: the protected ones and the change notes."""
    return [*config.protected_paths, f"{config.notes_dir.rstrip('/')}/**"]


def scope_at(repo: Repository, sha: str, spec: TaskSpec, config: RepoConfig) -> list[str]:
    return select_scope(repo.tracked_files(sha), paths=spec.paths, exclude=spec.exclude,
                        never=never_in_scope(config))


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


def contents_for_patterns(repo: Repository, sha: str, scope: Sequence[str],
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


def targets_at(repo: Repository, sha: str, scope: Sequence[str],
               patterns: Sequence[str]) -> dict[str, tuple[int, ...]]:
    texts = contents_for_patterns(repo, sha, scope, patterns)
    return find_targets({p: t for p, t in texts.items() if t is not None}, patterns)
