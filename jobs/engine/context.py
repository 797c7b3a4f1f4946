"""What every step of a job works with: the services, the record and its worktree.

`JobContext` keeps the record (save, events), reaches the outside (publish, gates) and owns
the job's worktree; the step handlers (planning, batch_run, review, revert, endings) receive it,
and the loop (jobs/engine/engine.py) is one.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal, Protocol, runtime_checkable

from jobs.adapters.allowlist_cache import admitted, default_network_hosts
from jobs.adapters.egress_defaults import index_variables
from jobs.basics.errors import ErrorInfo
from jobs.basics.voice import LOCAL, Voice
from jobs.decisions.ci import CiVerdict
from jobs.engine.attempt import (
    AttemptOutcome,
    AttemptRunner,
    EditCall,
    EnvironmentCall,
    sandbox_policy,
)
from jobs.engine.validation_hooks import (
    ValidationHook,
    VerifyHook,
    around_validation,
    first_stop,
)
from jobs.inputs.config import RepoConfig
from jobs.inputs.sandboxing import EnvironmentLayer, SandboxPolicy
from jobs.inputs.spec import TaskSpec
from jobs.kernel.feature_parts import FeatureParts
from jobs.kernel.gates import open_gate
from jobs.kernel.job import Batch, Job
from jobs.kernel.model import BatchStatus, JobStatus
from jobs.kernel.records import Attempt, CommandEvidence, Event
from jobs.notes.progress import gate_prompt
from jobs.notes.tally import outcome as job_outcome
from jobs.ports import (
    Checkout,
    CiFailure,
    Clock,
    ConflictError,
    EnvironmentStore,
    Forge,
    JobStore,
    Publication,
    Sandbox,
    Workspace,
)
from jobs.recipes import EditRequest, EditResult, editor_for
from jobs.recipes.llm_settings import LlmSettings

EXIT_COMPLETED, EXIT_FAILED, EXIT_CANCELLED = 0, 1, 5
MAX_LANDING_TREES = 200  # the newest note, revert and base-merge trees the record keeps
MAX_LANDING_COMMITS = 10  # the newest commits made to land (only unsaved landings need one)


@dataclass(frozen=True)
class Outcome:
    status: JobStatus
    exit_code: int
    message: str


class BatchHooks(Protocol):
    """What a feature adds to a batch's step (jobs/features/bisect gives the split of a failed
    batch): each returns True when it took the step over, False to let the engine go on."""

    def before_batch(self, engine: JobContext, batch: Batch) -> bool:
        """The loop is about to run `batch` (an attempt, or the work the hook left unfinished)."""
        ...

    def batch_failed(self, engine: JobContext, batch: Batch, attempt: Attempt,
                     outcome: AttemptOutcome) -> bool:
        """`batch`'s attempt failed (recorded, counted, the batch `failed`); before the engine
        retries it or opens the `failure` gate."""
        ...

    def batch_failed_ci(self, engine: JobContext, batch: Batch, sha: str,
                        failures: Sequence[CiFailure], error: ErrorInfo) -> bool:
        """`ci.wait: per_batch`: `batch`'s commit `sha` got red required checks and was withdrawn
        (its attempt `ci_failed`, the batch `failed`); before the engine retries it or opens
        the `failure` gate."""
        ...

    def candidate_checked(self, engine: JobContext, batch: Batch, sha: str,
                          verdict: CiVerdict) -> bool:
        """CI finished on `sha`, pushed for `batch`: True when it was the feature's
        candidate (and the feature took the verdict), False for the batch's own commit."""
        ...


class SafePointHook(Protocol):
    """One entry of the loop's safe-point list (jobs/engine/engine.py `SAFE_POINT`, then each
    feature's `safe_point`), run in order before a running job's next piece of work: an Outcome
    stops the loop with it, True means the hook took the step (the loop goes on with the next
    one), False or None lets the next hook run."""

    def __call__(self, engine: JobContext, /) -> Outcome | bool | None: ...


class AfterPushHook(Protocol):
    """A batch's commit is on the branch and recorded, not yet saved: a hook may hold the batch
    (CI per_batch: `awaiting_ci`); one that no hook held the engine then completes."""

    def __call__(self, engine: JobContext, batch: Batch, /) -> None: ...


class AdoptHook(Protocol):
    """A batch's commit found on the branch (its worker died between push and record): the
    status it takes instead of `completed` (CI per_batch: `awaiting_ci`), or None."""

    def __call__(self, engine: JobContext, batch: Batch, sha: str, /) -> BatchStatus | None: ...


class MilestoneEndHook(Protocol):
    """A milestone's batches are done, before its gate (or the final review for the last one):
    an Outcome holds the milestone there (the loop stops with it), None lets it end."""

    def __call__(self, engine: JobContext, milestone: int, /) -> Outcome | None: ...


class JobHook(Protocol):
    """`planned`: the batches are planned, before the baseline runs and the plan is shown;
    `after_revert`: a batch was reverted and recorded; `at_end`: the job has just ended
    (completed, failed or cancelled; saved, its summary not yet published); `after_steps`: the
    engine stops running steps (whatever the reason), before it returns."""

    def __call__(self, engine: JobContext, /) -> None: ...


class StartCheck(Protocol):
    """Before a job is created for `spec`: raise BadInputError (exit 2) naming what is missing
    when the feature cannot run it (llm: no model endpoint)."""

    def __call__(self, services: Services, spec: TaskSpec, /) -> None: ...


@dataclass(frozen=True)
class Base:
    """Where a job starts: a branch, its commit, and the config read from it."""

    branch: str
    sha: str
    config: RepoConfig
    config_source: str | None = None  # "working tree": read from the checkout, not the commit


class DraftHook(Protocol):
    """An issue without a spec block: a job whose spec the feature drafted from the issue's text
    (untrusted: it waits at `plan`) and the comment that shows the draft to the people who
    approve it (written with `services.voice`); BadInputError (exit 2) when it cannot draft."""

    def __call__(self, services: Services, title: str, body: str, number: int, /, *,
                 base: Base | None = None, repo_name: str | None = None) -> tuple[Job, str]: ...


@dataclass(frozen=True)
class Drafting:
    """A feature that drafts specs (llm): when each mode asks it to, and the drafting itself.
    The modes reach it through jobs/composition.py `drafting`, never by the feature's name."""

    local: Callable[[Services], bool]  # local mode drafts when this says so (an endpoint is set)
    server: Callable[[RepoConfig], bool]  # server mode drafts when the repository's config asks
    draft: DraftHook


class EditHook(Protocol):
    """Around an attempt's edit: call `apply` with the request (with what the feature lends the
    editor: llm's check in place, budget and transcript) and return its result; raise EditGated
    (jobs/engine/attempt_outcome.py) to stop the attempt at the feature's gate."""

    def __call__(self, engine: JobContext, batch: Batch, attempt: Attempt, request: EditRequest,
                 apply: Callable[[EditRequest], EditResult], /) -> EditResult: ...


class EnvironmentHook(Protocol):
    """The job's environment, found or built (environments: by `setup`, in the cache): the layer
    laid read-only over every later command, or the setup command that failed; `policy` is the
    commands' sandbox policy."""

    def __call__(self, engine: JobContext, policy: SandboxPolicy, /,
                 ) -> tuple[EnvironmentLayer | None, CommandEvidence | None]: ...


@dataclass(frozen=True)
class Feature:
    """One feature's part of the loop: its hooks at the loop's named points, each optional and
    run in the order of the features' tuple (jobs/composition.py). Its pure parts (gate rows,
    note sections) are `parts`, installed by the composition root. The engine never imports a
    feature: it only runs these."""

    name: str
    # Whether the feature has anything to do for this job (its config block on, its part of the
    # record there): a job that does not use it runs none of its hooks (its pure card and note
    # sections are still asked, and say nothing for it).
    active: Callable[[Job], bool] = lambda _job: True
    safe_point: SafePointHook | None = None
    after_push: AfterPushHook | None = None
    committed: AfterPushHook | None = None  # a batch commit recorded and saved (check runs)
    adopt: AdoptHook | None = None  # a batch commit found on the branch (branch_sync)
    before_milestone_end: MilestoneEndHook | None = None
    after_revert: JobHook | None = None
    at_end: JobHook | None = None
    after_steps: JobHook | None = None  # the engine stops: at a gate, an end, a wait (check runs)
    batch: BatchHooks | None = None  # its part of a batch's step (bisect: split a failed batch)
    planned: JobHook | None = None  # the plan is made, before it is shown (llm: the edit format)
    start_check: StartCheck | None = None  # refuse a spec it cannot run (llm: no endpoint)
    edit: EditHook | None = None  # around an attempt's edit (llm: the editor's extras)
    environment: EnvironmentHook | None = None  # the job's environment (environments: `setup`)
    validation: ValidationHook | None = None  # around a batch's validation (evidence: coverage)
    verify: VerifyHook | None = None  # a validated batch before its commit (evidence's gates)
    parts: FeatureParts | None = None
    # What the modes (not the loop) ask of it, through jobs/composition.py:
    draft: Drafting | None = None  # a spec drafted from an issue without a block (llm)
    # local mode: a line to say before a waiting job shows its gate again (base_moves: the base
    # moved meanwhile), or None
    resume_notice: Callable[[JobContext], str | None] | None = None
    report: Callable[[Job], str] | None = None  # `stepwise <name>-report`: the job as it saw it
    # server mode: a push to the job's base branch was seen while it waits (base_moves marks it)
    base_pushed: Callable[[Job, datetime], None] | None = None


@dataclass
class Services:
    """The ports the engine works through (jobs/ports.py); each mode wires its adapters."""

    repository: Workspace
    store: JobStore
    sandbox: Sandbox
    forge: Forge
    clock: Clock = lambda: datetime.now(UTC)
    voice: Voice = LOCAL  # how prompts and hints write commands (server: `/stepwise <verb>`)
    hidden_paths: tuple[Path, ...] = ()  # invisible to sandboxed commands (server: workdir, key)
    llm: LlmSettings | None = None  # recipe `llm`; None: read STEPWISE_LLM_* when needed
    environments: EnvironmentStore | None = None  # job environments built by `setup`
    network_deny_hosts: tuple[str, ...] = ()  # Stepwise's own services (Redis, the web app)
    features: tuple[Feature, ...] = ()  # in order: their hooks run in it (jobs/composition.py)


@runtime_checkable
class UnsyncedSave(Protocol):
    """A store that can write a record without making it durable (jobs/adapters/store.py's
    FileStore skips the fsyncs); stores without it make every save durable."""

    def save_unsynced(self, job: Job, *, touched: Collection[int] | None = None) -> Job: ...


class CancelSignal(Exception):
    """Raised at a safe point when the stored record asks for cancellation."""


def outcome_of(job: Job, *, voice: Voice = LOCAL) -> Outcome:
    if job.status is JobStatus.AWAITING_HUMAN and job.gate is not None:
        return Outcome(job.status, job.gate.exit_code, gate_prompt(job, voice=voice))
    if job.status is JobStatus.COMPLETED and not job.batches:
        return Outcome(job.status, EXIT_COMPLETED, "job completed with nothing to do (no "
                       "batch was planned, nothing was committed)")
    if job.status is JobStatus.COMPLETED:
        return Outcome(job.status, EXIT_COMPLETED,  # "completed with leftovers" when so
                       f"job {job_outcome(job)}; change note {job.note_path}")
    if job.status is JobStatus.CANCELLED:
        return Outcome(job.status, EXIT_CANCELLED, "job cancelled")
    if job.status is JobStatus.CANCEL_REQUESTED:  # accepted, not a failure: it ends cancelled
        return Outcome(job.status, EXIT_CANCELLED,
                       "cancel requested: the job stops at the next safe point")
    message = job.error.message if job.error else f"job is {job.status}"
    return Outcome(job.status, EXIT_FAILED, message)


class JobContext:
    """One job's record, services and worktree; the worktree lives as long as the object."""

    def __init__(self, services: Services, job: Job) -> None:
        self.services = services
        self.job = job
        self._runner: AttemptRunner | None = None

    # -- record keeping ---------------------------------------------------------------------
    def now(self) -> datetime:
        return self.services.clock()

    def save(self, *, touched: Iterable[int] | None = None, durable: bool = True) -> None:
        """Write the record; `touched` names the only batches changed since the last save
        (None: any may have changed). Tests run with STEPWISE_STORE_CHECK=1, which proves it.
        `durable=False` is for a record whose loss in a crash the next steps recover from
        (the store may then skip its fsyncs; every other reader sees it at once)."""
        self.job.updated_at = self.now()
        store = self.services.store
        names = None if touched is None else set(touched)
        try:
            # The store bumps `version` on this object; keep using it (callers hold its batches).
            if not durable and isinstance(store, UnsyncedSave):
                store.save_unsynced(self.job, touched=names)
            else:
                store.save(self.job, touched=names)
        except ConflictError:
            stored = self.services.store.reload(self.job)
            if stored is not None and stored.status is JobStatus.CANCEL_REQUESTED:
                raise CancelSignal from None
            raise

    def land(self, commit: str, *, batch: Batch | None = None, also: Iterable[int] = ()) -> str:
        """Move the job branch to `commit` (a child of the recorded head) after recording its
        tree, durably, as the tree this batch (or a note, revert or base merge) lands, and its
        id as a commit Stepwise made: only a commit of a recorded tree, made by Stepwise, is
        ever adopted as ours (jobs/decisions/reconcile.py).
        `also`: other batches changed since the last save (files a wider batch took).
        Returns the sha it landed as (server mode: GitHub's)."""
        job, repo = self.job, self.services.repository
        tree = repo.tree_of(commit)  # a commit this process wrote: from memory
        if batch is not None:
            batch.tree = tree
        elif tree not in job.landing_trees:
            job.landing_trees = [*job.landing_trees[-(MAX_LANDING_TREES - 1):], tree]
        job.landing_commits = [*job.landing_commits[-(MAX_LANDING_COMMITS - 1):], commit]
        self.save(touched=() if batch is None else (batch.number, *also))
        return repo.advance_branch(job.branch, commit, job.head_sha)

    def event(self, kind: str, message: str, batch: int | None = None) -> None:
        self.job.events.append(Event(at=self.now(), kind=kind, message=message, batch=batch))

    def features(self) -> Iterator[Feature]:
        """The features active for this job, in the tuple's order."""
        return (f for f in self.services.features if f.active(self.job))

    def batch_hooks(self) -> Iterator[BatchHooks]:
        """The features' batch hooks, in order (the first that takes a step ends the search)."""
        return (f.batch for f in self.features() if f.batch is not None)

    def run_hooks(self, point: Literal["planned", "after_revert", "at_end", "after_steps"]) -> None:
        for feature in self.features():
            if (hook := getattr(feature, point)) is not None:
                hook(self)

    def publish(self, kind: Publication, text: str) -> None:
        self.services.forge.publish(self.job, kind, text)

    def cancel_requested(self) -> bool:
        """Asked between steps and twice a second while a command runs: reads the status only."""
        return self.services.store.stored_status(self.job) is JobStatus.CANCEL_REQUESTED

    def check_cancel(self) -> None:
        if self.cancel_requested():
            raise CancelSignal

    # -- the worktree -----------------------------------------------------------------------
    @property
    def runner(self) -> AttemptRunner:
        if self._runner is None:
            repo = self.services.repository
            path = repo.state_dir / "worktrees" / f"issue-{self.job.number}"
            # Kept between steps (and between workers sharing a disk): reset at the cost of
            # what changed; a fresh one when this worker holds none (jobs/adapters/workspace.py).
            worktree = repo.open_worktree(path, self.job.head_sha, keep=True)
            policy = sandbox_policy(self.job.config,
                                    hidden=(repo.git_dir, *self.services.hidden_paths),
                                    repository=(repo.root,),
                                    should_stop=self.cancel_requested,
                                    network_allow=self.network_allow(),
                                    deny_hosts=self.services.network_deny_hosts,
                                    extra_env=self.extra_env())
            editor = editor_for(self.job.spec, sandbox=self.services.sandbox, policy=policy,
                                llm=self.services.llm)
            self._runner = AttemptRunner(repo, worktree, self.services.sandbox, policy, editor,
                                         self.services.clock, environment=self.environment_hook(),
                                         edit=self.edit_hook(editor.apply),
                                         validation=around_validation(
                                             [f.validation for f in self.features()
                                              if f.validation is not None]),
                                         verify=first_stop([f.verify for f in self.features()
                                                            if f.verify is not None]))
            self._runner.notify = lambda text: self.publish(Publication.NOTICE, text)
            self._runner.land = lambda batch, commit: self.land(
                commit, batch=batch, also=self._runner.widened if self._runner else ())
        return self._runner

    def environment_hook(self) -> EnvironmentCall | None:
        """The active feature that gives the job its environment, when a cache is wired."""
        hook = next((f.environment for f in self.features() if f.environment is not None), None)
        if hook is None or self.services.environments is None:
            return None
        return lambda _job, policy: hook(self, policy)

    def edit_hook(self, apply: Callable[[EditRequest], EditResult]) -> EditCall | None:
        """The editor's `apply` within the active features' `edit` hooks (the first feature's
        outermost); None when no active feature has one."""
        hooks = [f.edit for f in self.features() if f.edit is not None]
        if not hooks:
            return None

        def call(batch: Batch, attempt: Attempt, request: EditRequest) -> EditResult:
            def around(hook: EditHook, inner: Callable[[EditRequest], EditResult],
                       ) -> Callable[[EditRequest], EditResult]:
                return lambda given: hook(self, batch, attempt, given, inner)

            wrapped = apply
            for hook in reversed(hooks):
                wrapped = around(hook, wrapped)
            return wrapped(request)
        return call

    @property
    def worktree(self) -> Checkout:
        return self.runner.worktree

    def network_allow(self) -> list[str]:
        """The hosts the egress proxy admits: `network_allow`, or by default the registries of
        the ecosystems the repository uses and the package indexes configured in it or where
        Stepwise runs (jobs/adapters/allowlist_cache.py), recorded with their reasons on the
        job for the plan."""
        config = self.job.config
        if not config.network or config.network_allow:
            self.job.network_hosts = []
            return list(config.network_allow)
        self.job.network_hosts = default_network_hosts(
            self.services.repository, self.job.base_sha, env=config.env)
        return admitted(self.job.network_hosts)

    def extra_env(self) -> dict[str, str]:
        """What Stepwise adds below the config's `env`: the version from git, and with the
        network on the package index variables set where Stepwise runs (without credentials)."""
        extra = dict(self.job.git_version.env) if self.job.git_version is not None else {}
        if self.job.config.network:
            extra |= index_variables()
        return extra

    def close(self) -> None:
        """Let go of the worktree: it stays on disk while the job runs (its next step, on
        this worker, resets it instead of checking out the whole tree again), and goes when
        the job waits at a gate or has ended; the repository's long-lived reader ends here."""
        if self._runner is not None:
            if not self.keeps_worktree():
                self._runner.worktree.remove()
            self._runner = None
        self.services.repository.close()

    def keeps_worktree(self) -> bool:
        return not self.job.is_terminal and self.job.status is not JobStatus.AWAITING_HUMAN

    def open(self, kind: str, reason: str, *, batch: int | None = None,
             milestone: int | None = None, report: ErrorInfo | None = None,
             touched: Iterable[int] | None = None, cause: str | None = None) -> None:
        open_gate(self.job, kind, reason=reason, now=self.now(), batch=batch,
                  milestone=milestone, report=report, cause=cause)
        self.event("gate", f"{self.job.gate.id if self.job.gate else kind}: {reason}", batch)
        self.services.forge.expect(self.job, Publication.GATE)  # owed before the job waits
        self.save(touched=touched)
        self.publish(Publication.GATE, gate_prompt(self.job, voice=self.services.voice))
