"""Discovery and planning, as pure functions: scope, `path:line` targets, batches and milestones."""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import groupby
from posixpath import dirname

from jobs.basics import markdown_safe as md
from jobs.decisions.guard import CI_CONFIG_GLOBS, is_manifest_path, is_test_path
from jobs.inputs.globs import matches_any, unsafe_path_reason
from jobs.inputs.spec import TaskSpec

SYMLINK_MODE, SUBMODULE_MODE = "120000", "160000"


@dataclass(frozen=True)
class PlannedBatch:
    number: int
    milestone: int
    files: tuple[str, ...]
    targets: int


@dataclass(frozen=True)
class Plan:
    scope_files: tuple[str, ...]
    targets: Mapping[str, tuple[int, ...]]
    batches: tuple[PlannedBatch, ...]
    unreadable: tuple[str, ...] = field(default=())

    @property
    def target_count(self) -> int:
        return sum(len(lines) for lines in self.targets.values())

    @property
    def milestone_count(self) -> int:
        return max((batch.milestone for batch in self.batches), default=0)


def select_scope(
    tracked_files: Iterable[str],
    *,
    paths: Sequence[str],
    exclude: Sequence[str],
    never: Sequence[str],
) -> list[str]:
    """Files matching `paths`, minus `exclude` and the paths that are never in scope."""
    return sorted(
        path
        for path in set(tracked_files)
        if matches_any(path, paths) and not matches_any(path, exclude)
        and not matches_any(path, never)
    )


@dataclass(frozen=True)
class ScopeRules:
    """What the repository config allows a batch to edit (the diff guard's rules, at plan time)."""

    protected_paths: tuple[str, ...]
    allow_test_edits: bool
    allow_manifest_edits: bool


def left_out_rule(path: str, mode: str, rules: ScopeRules) -> str | None:
    """Why a file inside `paths` cannot be edited by any batch, or None when it can.

    The diff guard would refuse every edit of such a file, so the plan leaves it out and says
    why, instead of letting its batch fail twice.
    """
    if mode == SUBMODULE_MODE:
        return "submodule (mode 160000): Stepwise never changes submodules"
    if mode == SYMLINK_MODE:
        return "symlink (mode 120000): Stepwise never changes symlinks"
    if reason := unsafe_path_reason(path):
        return f"unsafe path: {reason}"
    if matches_any(path, CI_CONFIG_GLOBS):
        return "CI configuration: Stepwise never changes it"
    protected = next((p for p in rules.protected_paths if matches_any(path, [p])), None)
    if protected is not None:
        return f"protected_paths: `{protected}`"
    if not rules.allow_test_edits and is_test_path(path):
        return "test file: allow_test_edits is false"
    if not rules.allow_manifest_edits and is_manifest_path(path):
        return "dependency manifest or lock file: allow_manifest_edits is false"
    return None


def split_scope(
    modes: Mapping[str, str], *, paths: Sequence[str], exclude: Sequence[str],
    hidden: Sequence[str], rules: ScopeRules,
) -> tuple[list[str], list[tuple[str, str]]]:
    """The files a batch may edit, and the `(path, rule)` of those inside `paths` it may not.

    `hidden` (the change notes) is dropped silently: it is Stepwise's own output.
    """
    scope: list[str] = []
    left_out: list[tuple[str, str]] = []
    for path in sorted(modes):
        if not matches_any(path, paths) or matches_any(path, exclude) \
                or matches_any(path, hidden):
            continue
        rule = left_out_rule(path, modes[path], rules)
        if rule is None:
            scope.append(path)
        else:
            left_out.append((path, rule))
    return scope, left_out


def compile_patterns(patterns: Sequence[str]) -> list[re.Pattern[str]]:
    return [re.compile(pattern, re.MULTILINE) for pattern in patterns]


def matching_lines(text: str, patterns: Sequence[re.Pattern[str]]) -> tuple[int, ...]:
    """1-based line numbers where any pattern matches (a match spanning lines counts its first)."""
    if not patterns:
        return ()
    starts = [0]
    starts.extend(index + 1 for index, char in enumerate(text) if char == "\n")
    last_line = len(starts) - 1 if text.endswith("\n") else len(starts)
    lines: set[int] = set()
    for pattern in patterns:
        for match in pattern.finditer(text):
            line = bisect.bisect_right(starts, match.start())
            if line <= last_line:  # a zero-width match after the final newline is no line
                lines.add(line)
    return tuple(sorted(lines))


def find_targets(
    contents: Mapping[str, str], patterns: Sequence[str]
) -> dict[str, tuple[int, ...]]:
    """Every file with at least one match, mapped to its matching lines."""
    compiled = compile_patterns(patterns)
    found: dict[str, tuple[int, ...]] = {}
    for path in sorted(contents):
        lines = matching_lines(contents[path], compiled)
        if lines:
            found[path] = lines
    return found


def group_batches(files: Sequence[str], batch_size: int) -> list[list[str]]:
    """Chunk files into batches of at most `batch_size`, keeping one directory's files together.

    A directory that fits in one batch is never split across two; a directory larger than a
    batch fills whole batches of its own.
    """
    batches: list[list[str]] = []
    current: list[str] = []
    ordered = sorted(files, key=lambda path: (dirname(path), path))
    for _, group in groupby(ordered, key=dirname):
        members = list(group)
        if len(current) + len(members) > batch_size and current:
            batches.append(current)
            current = []
        while len(members) > batch_size:
            batches.append(members[:batch_size])
            members = members[batch_size:]
        current.extend(members)
        if len(current) == batch_size:
            batches.append(current)
            current = []
    if current:
        batches.append(current)
    return batches


def build_plan(
    *,
    scope_files: Sequence[str],
    contents: Mapping[str, str | None],
    find: Sequence[str],
    batch_size: int,
    batches_per_milestone: int,
) -> Plan:
    """The whole plan. With `find`, only files that match are batched; without, every file is."""
    readable = {path: text for path, text in contents.items() if text is not None}
    unreadable = tuple(sorted(path for path, text in contents.items() if text is None))
    targets = find_targets(readable, find) if find else {}
    work_files = sorted(targets) if find else sorted(p for p in scope_files if p in readable)
    batches = tuple(
        PlannedBatch(
            number=index + 1,
            milestone=index // batches_per_milestone + 1,
            files=tuple(files),
            targets=sum(len(targets.get(path, ())) for path in files),
        )
        for index, files in enumerate(group_batches(work_files, batch_size))
    )
    return Plan(
        scope_files=tuple(sorted(scope_files)),
        targets=targets,
        batches=batches,
        unreadable=unreadable,
    )


def nothing_matches_words(spec: TaskSpec, files: int, where: str) -> str:
    """Why a spec would change nothing, naming what was searched and `where` ("in acme/app at
    abc1234 (branch main)"): its `find` patterns, `paths` and `exclude`, and how many files."""
    patterns = ", ".join(md.code(p) for p in spec.find)
    globs = ", ".join(md.code(p) for p in spec.paths)
    excluding = f", excluding {', '.join(md.code(p) for p in spec.exclude)}" \
        if spec.exclude else ""
    return (f"nothing to change: spec field `find` ({patterns}) matches nothing in the {files} "
            f"file{'' if files == 1 else 's'} spec field `paths` ({globs}) selects{excluding}, "
            f"{where}")
