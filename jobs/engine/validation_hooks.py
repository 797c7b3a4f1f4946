"""What a feature may add to the validation that accepts a batch (jobs/features/evidence gives
the evidence: coverage of the changed lines, the test-integrity guard, the edit shapes).

`ValidationHook` wraps the validation of one candidate tree, like an `EditHook` wraps the edit:
it may add environment and writable host directories to the commands and run a command with
added options (a probe's output; the record shows the argv the config wrote), call `run`, then
read what the probe left (untrusted: it came out of the sandbox). `VerifyHook` runs once the
tree passed validation and the completion check, just before it is committed: it may stop the
attempt at a gate (`uncovered_change`, `tests_weakened`) or fail it. Both see the tree under
test as a `TreeUnderTest`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Protocol

from jobs.engine.attempt_outcome import AttemptOutcome
from jobs.kernel.job import Batch, Job
from jobs.kernel.records import Attempt, CommandEvidence
from jobs.ports import Checkout, Workspace


@dataclass(frozen=True)
class TreeUnderTest:
    """The candidate tree of a batch's attempt: its worktree (the tree checked out), its parent
    commit and the repository; `diff` is the change from the parent to the tree."""

    repository: Workspace
    worktree: Checkout
    tree: str
    parent: str
    seen_at: Path  # where the sandboxed commands see the worktree (bubblewrap: a fixed path)
    isolated: bool  # the commands run in bubblewrap (else only with a scrubbed environment)

    @cached_property
    def diff(self) -> str:
        """The unified diff from `parent` to `tree` (paths unquoted, no external diff or
        textconv driver: attributes in the tree never choose a program); the worktree's own
        when it read that very diff before writing the tree."""
        known = self.worktree.diff_written(self.parent, self.tree)
        if known is not None:
            return known
        return self.repository.diff_text(self.parent, self.tree)

    @cached_property
    def changed_paths(self) -> list[str]:
        """The paths that differ between `parent` and `tree` (both sides of a rename), sorted:
        the worktree's own when it wrote the tree from that very change."""
        known = self.worktree.paths_written(self.parent, self.tree)
        return sorted(known if known is not None else
                      self.repository.changes(self.parent, self.tree))


@dataclass(frozen=True)
class ValidationRequest:
    """The validation commands of one tree as they will run: `argvs` (as the config says; the
    record shows these), `env` laid over each command's environment (over the config's own
    `env`: a hook that sets a variable the config sets, such as PYTHONPATH, merges the two
    itself), host directories bound writable at the same path."""

    argvs: tuple[tuple[str, ...], ...]
    env: Mapping[str, str] = field(default_factory=dict)
    writable: tuple[Path, ...] = ()
    # Per command (by index), environment for that command only (a probe that measures one
    # runner but not another); merged over `env`.
    env_for: Mapping[int, Mapping[str, str]] = field(default_factory=dict)
    # Per command (by index), the argv it runs instead: the same command asking its runner for
    # a report (`--junitxml`, the test-integrity guard); the record still shows `argvs`.
    argv_for: Mapping[int, tuple[str, ...]] = field(default_factory=dict)

    def environment(self, index: int) -> dict[str, str]:
        return {**self.env, **self.env_for.get(index, {})}

    def argv(self, index: int, argv: list[str]) -> list[str]:
        return list(self.argv_for.get(index, argv))


# The validation's result: the commands' evidence, the failing one (or None) and its code.
ValidationResult = tuple[list[CommandEvidence], CommandEvidence | None, str]
RunValidation = Callable[[ValidationRequest], ValidationResult]


class ValidationHook(Protocol):
    """Around the validation of `under_test` for `batch`'s `attempt`: call `run` with the
    request (changed or not) and return its result, after reading what the probe measured."""

    def __call__(self, job: Job, batch: Batch, attempt: Attempt, under_test: TreeUnderTest,
                 request: ValidationRequest, run: RunValidation, /) -> ValidationResult: ...


class VerifyHook(Protocol):
    """`under_test` passed validation and the completion check: an outcome stops the attempt
    (a gate, a failure), None lets it be committed."""

    def __call__(self, job: Job, batch: Batch, attempt: Attempt,
                 under_test: TreeUnderTest, /) -> AttemptOutcome | None: ...


def around_validation(hooks: list[ValidationHook]) -> ValidationHook | None:
    """The hooks as one, each around the next (the first outermost); None without any."""
    if not hooks:
        return None

    def call(job: Job, batch: Batch, attempt: Attempt, under_test: TreeUnderTest,
             request: ValidationRequest, run: RunValidation) -> ValidationResult:
        def around(hook: ValidationHook, inner: RunValidation) -> RunValidation:
            return lambda given: hook(job, batch, attempt, under_test, given, inner)

        wrapped = run
        for hook in reversed(hooks):
            wrapped = around(hook, wrapped)
        return wrapped(request)
    return call


def first_stop(hooks: list[VerifyHook]) -> VerifyHook | None:
    """The hooks as one: asked in order, the first that stops the attempt wins; None without any."""
    if not hooks:
        return None

    def call(job: Job, batch: Batch, attempt: Attempt,
             under_test: TreeUnderTest) -> AttemptOutcome | None:
        return next((stopped for hook in hooks
                     if (stopped := hook(job, batch, attempt, under_test)) is not None), None)
    return call
