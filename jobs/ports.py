"""The ports: the forge, split by who asks (`Publisher`: what the engine tells people;
`CiForge`: the CI feature's questions to the repository's CI; `CheckRunPublisher`: the check
runs feature's; `Forge`, all three, is what a mode wires: local mode's side
adapters/local_forge.py, server mode's bot/github/forge.py), the job store, the workspace, the
sandbox, the environment store and the clock."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import Protocol

from jobs.basics.errors import StateError
from jobs.decisions.ci import CheckObservation
from jobs.inputs.sandboxing import CommandResult, EnvironmentLayer, SandboxPolicy
from jobs.kernel.job import Job
from jobs.kernel.model import JobStatus
from jobs.notes.annotations import Annotation
from jobs.notes.check_runs import CheckRunDraft


class Publication(StrEnum):
    """Kinds of message; on GitHub each maps to a comment or to the PR body (the progress card)."""

    PLAN = "plan"
    PROGRESS = "progress"
    GATE = "gate"
    MILESTONE_REPORT = "milestone_report"
    SUMMARY = "summary"
    RESUMED = "resumed"  # after an interruption: where the job picks up
    NOTICE = "notice"
    CHECK_RUN = "check_run"  # a check run, found again by its external id


@dataclass(frozen=True)
class CiReport:
    """What the forge knows of one commit's CI: every check run and commit status seen on it
    (`jobs.decisions.ci.CheckObservation`s), and the base branch's required status checks (branch
    protection and rulesets together; empty when the base requires none)."""

    observed: tuple[CheckObservation, ...] = ()
    protected: tuple[str, ...] = ()
    strict: bool = False  # the base's protection requires branches to be up to date
    own_app_id: int = 0  # Stepwise's App id: its own check runs (by `app.id`) are not CI


@dataclass(frozen=True)
class CiFailure:
    """One failing check, told well enough to act on: its annotations (repository paths and
    lines), the tail of the failing Actions job's log (empty when it is no Actions job or the
    log is gone), and its link."""

    check: str
    conclusion: str
    url: str = ""
    annotations: tuple[Annotation, ...] = field(default=())
    log_tail: str = ""


@dataclass(frozen=True)
class RerunRefused:
    """A failing check the forge could not run again, and what a person does instead (which
    button on GitHub, with its link)."""

    check: CheckObservation
    instead: str


class Publisher(Protocol):
    """What the engine and every feature tell the people steering a job."""

    def publish(self, job: Job, kind: Publication, text: str) -> None:
        """Show `text` to the people steering `job`. A forge that can fail keeps what it could
        not show in the job's outbox (jobs/kernel/outbox.py) instead of raising."""
        ...

    def expect(self, job: Job, kind: Publication) -> None:
        """Record in `job`, before it is saved, that `kind` is owed (so a worker that dies
        before publishing leaves it owed, for the reconciler)."""
        ...


class CiForge(Protocol):
    """What the CI feature (jobs/features/ci/) asks of the repository's CI."""

    def ci_report(self, job: Job, sha: str) -> CiReport | None:
        """The checks and statuses on `sha` now, and what the base branch requires; None when
        this forge has no CI (local mode). A fault raises a retryable StepwiseError."""
        ...

    def ci_failures(self, job: Job, sha: str,
                    failing: Sequence[CheckObservation]) -> list[CiFailure]:
        """Annotations and log tails of the `failing` checks on `sha` (best effort: a detail
        GitHub cannot give is left empty, never an error)."""
        ...

    def rerun_checks(self, job: Job, sha: str,
                     checks: Sequence[CheckObservation]) -> list[RerunRefused]:
        """Ask CI to run the failed `checks` on `sha` again where GitHub lets the App (Actions:
        re-run the failed jobs, with `actions: write`); returns the checks it could not re-run,
        each with what a person presses instead."""
        ...


class CheckRunPublisher(Protocol):
    """What the check runs feature (jobs/features/check_runs/, server only) sends."""

    def publish_check_run(self, job: Job, draft: CheckRunDraft) -> None:
        """Create or update Stepwise's own check run `draft` (found again by its external id,
        so repeating it never makes a second run). Owed in the outbox under
        `check:<external id>` until GitHub confirms it; local mode ignores it."""
        ...


class Forge(Publisher, CiForge, CheckRunPublisher, Protocol):
    """All of the forge's ports, as each mode wires one object (local mode:
    jobs/adapters/local_forge.py; the server: bot/github/forge.py). The engine uses
    `Publisher`; a feature takes the narrow port it needs from it (ci/port.py,
    check_runs/port.py)."""


# -- the job store, the workspace, the sandbox and the clock (DESIGN.md "Layout") ----------------
# Adapters: jobs/adapters/store.py and bot/plumbing/redis_store.py (JobStore),
# jobs/adapters/workspace.py (Workspace, Checkout), jobs/adapters/sandbox.py (Sandbox); the
# clock is a function returning an aware datetime.


class JobStore(Protocol):
    def reload(self, job: Job) -> Job | None:
        """The stored copy of `job`, or None."""
        ...

    def stored_status(self, job: Job) -> JobStatus | None:
        """The status stored for `job` (cheap: no batches are read), or None."""
        ...

    def save(self, job: Job, *, touched: Collection[int] | None = None) -> Job:
        """Write `job` if the stored version is still `job.version`, and bump it.

        `touched` names the batches that changed since the last save (None: maybe all of
        them), so that recording one batch costs the same whatever the job's size.
        """
        ...


class Clock(Protocol):
    def __call__(self) -> datetime:
        """Now, timezone-aware."""
        ...


class Sandbox(Protocol):
    """Runs one argv in `cwd` under `policy`; `cwd` and `writable` are the only writable paths."""

    isolated: bool

    def run(
        self, argv: Sequence[str], *, cwd: Path, policy: SandboxPolicy,
        writable: Sequence[Path] = (),
    ) -> CommandResult: ...  # fmt: skip


class BuiltEnvironment(EnvironmentLayer, Protocol):
    """An environment `setup` built, as the cache gives it back (jobs/adapters/environments.py's
    `Environment`): its layer, and whether this job reused it."""

    @property
    def from_cache(self) -> bool: ...


class EnvironmentStore(Protocol):
    """Where job environments are kept under their key (jobs/adapters/environments.py's
    `EnvironmentCache`): what the environments feature builds in and takes from."""

    @property
    def root(self) -> Path: ...

    def get(self, key: str) -> BuiltEnvironment | None: ...

    def building(self, key: str) -> AbstractContextManager[Path]:
        """The key's build lock, held while the block runs, and a fresh build directory."""
        ...

    def commit(self, key: str, staging: Path, *, entries: Sequence[str],
               setup_evidence: Sequence[dict[str, object]],
               inputs: Mapping[str, object] | None = None) -> BuiltEnvironment: ...

    def ready_caches(self, environment: EnvironmentLayer) -> Path: ...

    def latest_inputs(self) -> dict[str, object] | None: ...

    def record_failure(self, key: str, *, what: str, job: str) -> None:
        """Setup failed to build `key`: what failed, kept for the next job's plan."""
        ...

    def last_failure(self, key: str) -> str: ...


class Commit(Protocol):
    """One commit as the branch's reading needs it (a frozen record in the adapter)."""

    @property
    def sha(self) -> str: ...

    @property
    def parents(self) -> tuple[str, ...]: ...

    @property
    def subject(self) -> str: ...

    @property
    def body(self) -> str: ...

    @property
    def trailers(self) -> dict[str, str]: ...

    @property
    def reverted_sha(self) -> str | None: ...

    @property
    def tree(self) -> str: ...

    @property
    def committer_email(self) -> str: ...


@dataclass(frozen=True)
class Authorship:
    """Who wrote a commit (as git records its author), its subject and its parents."""

    parents: tuple[str, ...]
    name: str
    email: str
    subject: str


class Checkout(Protocol):
    """A job's worktree: files at a commit, changed by an editor, staged by Stepwise itself,
    written as trees and commits; never its own git metadata in the files."""

    @property
    def path(self) -> Path: ...

    @property
    def resets(self) -> int: ...

    # A raw git argv: left for the features that still use one (never the engine).
    def git(self, *args: str, stdin: str | None = None, env: Mapping[str, str] | None = None,
            check: bool = True) -> str: ...
    def reset(self, sha: str) -> None: ...
    def restore(self, tree: str) -> None: ...
    def stage_all(self) -> None: ...
    def stage_files(self, paths: Iterable[str]) -> None: ...
    # Stepwise's own file (the change note), never written through a link: refused with an
    # error whose code is `unsafe_path`.
    def put_file(self, path: str, data: bytes) -> None: ...
    def staged_diff(self) -> str: ...
    def staged_paths(self) -> list[str]: ...
    def write_tree(self) -> str: ...
    def diff_written(self, parent: str, tree: str) -> str | None: ...
    def paths_written(self, parent: str, tree: str) -> list[str] | None: ...
    def revert(self, commit: str) -> None: ...
    def head_tree(self) -> str: ...
    def merged_tree(self, other: str) -> str | None: ...
    def commit_tree(self, tree: str, parent: str, message: str) -> str: ...
    def untracked_entries(self) -> list[str]: ...
    def remove(self) -> None: ...


class Workspace(Protocol):
    """The repository the engine works on: read at commits, branches moved only forward,
    worktrees opened at a commit."""

    @property
    def root(self) -> Path: ...

    @property
    def git_dir(self) -> Path: ...

    @property
    def state_dir(self) -> Path: ...

    @property
    def bare(self) -> bool: ...  # a bare clone (server mode), not a user's checkout

    # A raw git argv: left for the features that still use one; the engine asks by name
    # (tests/jobs/engine/test_adapter_imports.py holds it to that).
    def git(self, *args: str, check: bool = True) -> str: ...
    def current_branch(self) -> str | None: ...
    def resolve(self, ref: str) -> str | None: ...
    def branch_head(self, branch: str) -> str | None: ...
    def tracked_files(self, sha: str) -> list[str]: ...
    def tracked_modes(self, sha: str) -> dict[str, str]: ...
    def read_texts(self, sha: str, paths: Iterable[str]) -> dict[str, str | None]: ...
    def grep_files(self, sha: str, literals: Sequence[str]) -> set[str] | None: ...
    def show_file(self, sha: str, path: str) -> str | None: ...
    def create_branch(self, branch: str, sha: str) -> None: ...
    def drop_branch(self, branch: str, sha: str) -> None: ...
    def advance_branch(self, branch: str, new: str, old: str) -> str: ...
    def commits(self, base: str, head: str, *,
                exclude: Sequence[str] = ()) -> Sequence[Commit]: ...
    def withdraw(self, branch: str, candidate: str, to: str) -> None: ...
    def own_commits(self, commits: Sequence[Commit], *,
                    made: Collection[str] | None = None) -> frozenset[str]: ...
    def is_ancestor(self, ancestor: str, descendant: str) -> bool: ...
    def tree_of(self, commit: str) -> str: ...
    def changes(self, old: str | None, new: str) -> dict[str, str]: ...
    def diff_text(self, old: str, new: str) -> str: ...
    def merge_base(self, one: str, other: str) -> str | None: ...
    def branches(self, *patterns: str) -> list[str]: ...
    def names_in(self, commit: str, folder: str) -> list[str]: ...
    def authorship(self, sha: str) -> Authorship: ...
    def describe(self, sha: str) -> str: ...
    def open_worktree(self, path: Path, sha: str, *, keep: bool = False) -> Checkout: ...
    def close(self) -> None:
        """End what the workspace keeps running for the job (its long-lived git reader)."""
        ...


class ConflictError(StateError):
    """Someone else saved the job since it was read (a store's compare-and-set failed)."""

    code = "state_conflict"
