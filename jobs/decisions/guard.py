"""The diff guard: checks a batch's staged git diff against the repository's scope policy (the
rules, the verdict, which paths are tests or manifests); reading the diff is guard_diff.py."""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from enum import StrEnum
from pathlib import PurePosixPath
from typing import Literal

from jobs.decisions.guard_diff import DiffParseError, parse_diff
from jobs.decisions.new_names import collision, name_problem
from jobs.inputs.globs import matches_any, unsafe_path_reason

__all__ = ["CI_CONFIG_GLOBS", "DiffParseError", "GuardPolicy", "GuardVerdict", "Rule", "Violation",
           "check_diff", "is_manifest_path", "is_test_path"]

_CONFIG = ".github/stepwise.yml"
CI_CONFIG_GLOBS = (
    *(".github/workflows/**", ".gitlab-ci.yml", ".circleci/**", "Jenkinsfile"),
    "azure-pipelines.yml",
)
_TEST_DIRS = frozenset({"tests", "test", "__tests__", "spec", "testing"})
_TEST_NAMES = (
    *("test_*.py", "*_test.py", "tests.py", "conftest.py", "*_test.go", "*Test.java"),
    "*_spec.rb",
    *(f"*.test.{ext}" for ext in ("js", "jsx", "ts", "tsx", "mjs", "cjs")),
    *(f"*.spec.{ext}" for ext in ("js", "jsx", "ts", "tsx")),
)
_MANIFEST_NAMES = (
    *("pyproject.toml", "setup.py", "setup.cfg", "requirements*.txt", "**/requirements/*.txt"),
    *("constraints*.txt", "Pipfile", "Pipfile.lock", "poetry.lock", "uv.lock", "pdm.lock"),
    *("package.json", "package-lock.json", "npm-shrinkwrap.json", "yarn.lock"),
    *("pnpm-lock.yaml", "bun.lockb", "Cargo.toml", "Cargo.lock", "go.mod", "go.sum"),
    *("Gemfile", "Gemfile.lock", "*.gemspec", "composer.json", "composer.lock", "pom.xml"),
    *("build.gradle", "build.gradle.kts", "gradle.lockfile", "environment.yml", "conda-lock.yml"),
)
_EXEC_MODE = "100755"
_SYMLINK_MODE = "120000"
_GITLINK_MODE = "160000"


@dataclass(frozen=True)
class GuardPolicy:
    allow_deletions: bool | Literal["ask"] = False
    allow_new_files: bool = False
    allow_test_edits: bool = False
    allow_manifest_edits: bool = False
    protected_paths: tuple[str, ...] = (".github/**", ".env*", "**/*.pem", "**/secrets/**")
    max_batch_lines: int = 400


class Rule(StrEnum):
    """Why a changed file is refused; each value is the rule name shown to users."""

    OUTSIDE_BATCH = "outside_batch"
    OUTSIDE_BATCH_IN_SCOPE = "outside_batch_in_scope"
    DELETION = "deletion"
    RENAME = "rename"
    NEW_FILE = "new_file"
    TEST_EDIT = "test_edit"
    MANIFEST_EDIT = "manifest_edit"
    PROTECTED_PATH = "protected_path"
    CI_CONFIG = "ci_config"
    BINARY = "binary"
    SYMLINK = "symlink"
    MODE_CHANGE = "mode_change"
    UNSAFE_PATH = "unsafe_path"
    SUBMODULE = "submodule"
    NEW_NAME = "new_name"


_RULE_ORDER = {rule: index for index, rule in enumerate(Rule)}
_CHANGE_WORDS = {"delete": "deletes", "add": "creates", "copy": "creates", "rename": "renames"}
_DETAILS = {
    Rule.OUTSIDE_BATCH: "is neither in this batch nor inside the job's `paths`; an edit may "
    "only touch its batch's files",
    Rule.OUTSIDE_BATCH_IN_SCOPE: "is inside the job's `paths` but not in this batch; approve "
    "at the `scope` gate to accept the wider batch",
    Rule.DELETION: "deletes the file; set allow_deletions: true (or ask) in {config} to allow it",
    Rule.RENAME: "renames {source} to this path; set allow_deletions: true and "
    "allow_new_files: true in {config} to allow it",
    Rule.NEW_FILE: "creates a new file; set allow_new_files: true in {config} to allow new "
    "files inside the job's `paths`",
    Rule.TEST_EDIT: "{change} a test file; set allow_test_edits: true in {config} to allow it",
    Rule.MANIFEST_EDIT: "{change} a dependency manifest or lock file; set "
    "allow_manifest_edits: true in {config} to allow it",
    Rule.PROTECTED_PATH: "matches protected_paths; only removing that pattern from "
    "protected_paths in {config} allows it",
    Rule.CI_CONFIG: "is CI configuration, which Stepwise never changes (no setting allows it)",
    Rule.BINARY: "is a binary file; Stepwise never commits binary changes",
    Rule.SYMLINK: "is a symbolic link; Stepwise never creates, changes or removes symlinks",
    Rule.MODE_CHANGE: "{change}; Stepwise never changes file permissions",
    Rule.UNSAFE_PATH: "is an unsafe path: {reason}",
    Rule.SUBMODULE: "is a git submodule (gitlink); Stepwise never adds, moves or removes "
    "submodules",
    Rule.NEW_NAME: "is a new file name Stepwise refuses: {reason}; no setting allows it",
}


@dataclass(frozen=True)
class Violation:
    path: str
    rule: Rule
    detail: str


@dataclass(frozen=True)
class GuardVerdict:
    violations: tuple[Violation, ...]
    changed_files: tuple[str, ...]
    deleted_files: tuple[str, ...]
    added_files: tuple[str, ...]
    lines_added: int
    lines_removed: int
    gate: str | None

    @property
    def ok(self) -> bool:
        return not self.violations and self.gate is None

    def describe(self) -> str:
        total = self.lines_added + self.lines_removed
        lines: list[str] = []
        if self.gate == "scope":
            lines.append("the edit touched files inside the job's `paths` but outside this batch:")
        elif self.gate == "deletion":
            names = ", ".join(self.deleted_files)
            lines.append(f"the edit deletes {len(self.deleted_files)} file(s) ({names})")
        elif self.gate == "large_change":
            lines.append(
                f"the diff changes {total} lines (+{self.lines_added} -{self.lines_removed}), "
                "more than max_batch_lines allows"
            )
        lines.extend(f"- {v.path}: {v.rule} — {v.detail}" for v in self.violations)
        if not lines:
            lines.append(f"ok: {len(self.changed_files)} file(s) changed, {total} lines")
        return "\n".join(lines)


def is_test_path(path: str) -> bool:
    """Whether `path` is a test file: under a test directory, or named like a test."""
    parts = PurePosixPath(path).parts
    return any(part.lower() in _TEST_DIRS for part in parts[:-1]) or matches_any(path, _TEST_NAMES)


def is_manifest_path(path: str) -> bool:
    """Whether `path` is a dependency manifest or lock file (by file name, at any depth)."""
    return matches_any(path, _MANIFEST_NAMES)


def check_diff(
    diff_text: str,
    *,
    batch_files: Collection[str],
    scope_files: Collection[str],
    policy: GuardPolicy,
    existing_files: Callable[[], Collection[str]] = lambda: (),
) -> GuardVerdict:
    """Judge a staged diff against `policy`; raises DiffParseError when it is not a git diff.

    `scope_files` should list every file inside the job's `paths` in the edited tree, so
    that new files the edit created inside `paths` are recognised as in scope.
    `existing_files` gives the tracked files before the edit (asked only when it names new
    files), which a new name must not collide with on a case-insensitive file system.
    """
    entries, lines_added, lines_removed = parse_diff(diff_text)
    batch, scope = set(batch_files), set(scope_files)
    found: dict[tuple[str, Rule], str] = {}

    def refuse(path: str, rule: Rule, **facts: str) -> None:
        found.setdefault((path, rule), _DETAILS[rule].format(config=_CONFIG, **facts))

    def membership(path: str, *, new: bool) -> None:
        if path not in batch and not (new and path in scope):
            refuse(path, Rule.OUTSIDE_BATCH_IN_SCOPE if path in scope else Rule.OUTSIDE_BATCH)

    for entry in entries:
        src, dst, shown = entry.source, entry.target, entry.shown
        if entry.kind in ("delete", "rename"):
            membership(src, new=False)
        if entry.kind != "delete":
            membership(dst, new=entry.kind != "modify")
        if entry.kind == "delete" and policy.allow_deletions not in (True, "ask"):
            refuse(src, Rule.DELETION)
        if entry.kind in ("add", "copy") and not policy.allow_new_files:
            refuse(dst, Rule.NEW_FILE)
        if entry.kind == "rename" and not (
            policy.allow_deletions is True and policy.allow_new_files
        ):
            refuse(dst, Rule.RENAME, source=src)
        if entry.kind in ("add", "copy", "rename"):
            problem = name_problem(dst)
            if problem is None:
                others = [p for p in existing_files() if p != src]
                clash = collision(dst, others)
                problem = None if clash is None else \
                    f"differs from the existing `{clash}` only in case or Unicode form"
            if problem is not None:
                refuse(dst, Rule.NEW_NAME, reason=problem)
        # The paths whose content changes: a copy leaves its source as it was.
        change = _CHANGE_WORDS.get(entry.kind, "edits")  # what git says happened to the file
        for path in [src, dst] if entry.kind == "rename" else [shown]:
            reason = unsafe_path_reason(path)
            if reason is not None:
                refuse(path, Rule.UNSAFE_PATH, reason=reason)
            if matches_any(path, CI_CONFIG_GLOBS):
                refuse(path, Rule.CI_CONFIG)
            if matches_any(path, policy.protected_paths):
                refuse(path, Rule.PROTECTED_PATH)
            if is_test_path(path) and not policy.allow_test_edits:
                refuse(path, Rule.TEST_EDIT, change=change)
            if is_manifest_path(path) and not policy.allow_manifest_edits:
                refuse(path, Rule.MANIFEST_EDIT, change=change)
        modes = {entry.source_mode, entry.target_mode}
        if entry.binary:
            refuse(shown, Rule.BINARY)
        if _SYMLINK_MODE in modes:
            refuse(shown, Rule.SYMLINK)
        if _GITLINK_MODE in modes:
            refuse(shown, Rule.SUBMODULE)
        if entry.kind == "add" and entry.target_mode == _EXEC_MODE:
            refuse(shown, Rule.MODE_CHANGE, change="creates an executable file (mode 100755)")
        elif entry.kind != "add" and None not in modes and len(modes) == 2:
            change = f"changes the file mode from {entry.source_mode} to {entry.target_mode}"
            refuse(shown, Rule.MODE_CHANGE, change=change)

    ordered = sorted(found.items(), key=lambda item: (item[0][0], _RULE_ORDER[item[0][1]]))
    violations = tuple(Violation(path, rule, detail) for (path, rule), detail in ordered)
    deleted = sorted({e.source for e in entries if e.kind == "delete"})
    # Order of gates: any violation refuses outright (no gate), except when every violation is
    # OUTSIDE_BATCH_IN_SCOPE, which opens `scope`; then `deletion` (allow_deletions: ask);
    # then `large_change`. The first applicable gate wins; the next shows after approval.
    gate: str | None = None
    if violations:
        if all(v.rule is Rule.OUTSIDE_BATCH_IN_SCOPE for v in violations):
            gate = "scope"
    elif deleted and policy.allow_deletions == "ask":
        gate = "deletion"
    elif lines_added + lines_removed > policy.max_batch_lines:
        gate = "large_change"
    return GuardVerdict(
        violations=violations,
        changed_files=tuple(sorted({e.shown for e in entries})),
        deleted_files=tuple(deleted),
        added_files=tuple(sorted({e.target for e in entries if e.kind in ("add", "copy")})),
        lines_added=lines_added,
        lines_removed=lines_removed,
        gate=gate,
    )
