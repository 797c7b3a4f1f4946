"""The engine: advances a job step by step, writing the record after every step, until a gate or the end."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from jobs.adapters.discovery import contents_for_patterns, plan_scope
from jobs.adapters.egress import default_allowlist
from jobs.adapters.environments import EnvironmentCache
from jobs.adapters.sandbox import Sandbox
from jobs.adapters.store import ConflictError, JobStore
from jobs.adapters.workspace import Repository, Worktree
from jobs.domain.config import CONFIG_PATH, RepoConfig, load_config
from jobs.domain.errors import BadInputError, ErrorInfo, RetryClass, StepwiseError
from jobs.domain.gates import open_gate
from jobs.domain.model import (
    FINISHED_BATCH_STATUSES,
    Attempt,
    Batch,
    BatchStatus,
    Event,
    Gate,
    Job,
    JobStatus,
)
from jobs.domain.note_parts import baseline_failure
from jobs.domain.notes import files_label, gate_prompt, render_card, render_plan
from jobs.domain.plan import build_plan
from jobs.domain.programs import refusal_reason, split_command
from jobs.domain.spec import IssueTask, Recipe, parse_issue
from jobs.editors import editor_for
from jobs.editors.base import CommandCancelled
from jobs.editors.llm.accounting import settle_budget_gate
from jobs.editors.llm.settings import LlmSettings, load_llm_settings
from jobs.engine import branch_sync, review
from jobs.engine.attempt import AttemptOutcome, AttemptRunner, Result, sandbox_policy
from jobs.engine.baseline import baseline_report, recheck_baseline
from jobs.engine.batch_facts import record_changes
from jobs.engine.note_commit import commit_note
from jobs.engine.recover import find_orphan
from jobs.ports import Forge, Publication

EXIT_COMPLETED, EXIT_FAILED, EXIT_CANCELLED = 0, 1, 5
# Failures that come out the same however often they are tried: the failure gate opens at once.
# A model may answer differently next time (it is told why), so for recipe llm only a refused
# program counts; `replace` and `command` edit the same way every time.
DETERMINISTIC_FAILURES = frozenset({"guard_refused", "edit_changed_nothing", "targets_remain",
                                    "command_refused"})
DETERMINISTIC_FOR_LLM = frozenset({"command_refused"})


@dataclass(frozen=True)
class Outcome:
    status: JobStatus
    exit_code: int
    message: str


@dataclass
class Services:
    repository: Repository
    store: JobStore
    sandbox: Sandbox
    forge: Forge
    clock: Callable[[], datetime] = lambda: datetime.now(UTC)
    command_suffix: str = ""  # appended to the commands gate prompts print (local: --repo)
    hidden_paths: tuple[Path, ...] = ()  # invisible to sandboxed commands (server: workdir, key)
    llm: LlmSettings | None = None  # recipe `llm`; None: read STEPWISE_LLM_* when needed
    environments: EnvironmentCache | None = None  # job environments built by `setup`
    network_deny_hosts: tuple[str, ...] = ()  # Stepwise's own services (Redis, the web app)


class CancelSignal(Exception):
    """Raised at a safe point when the stored record asks for cancellation."""


def outcome_of(job: Job, *, suffix: str = "") -> Outcome:
    if job.status is JobStatus.AWAITING_HUMAN and job.gate is not None:
        return Outcome(job.status, job.gate.exit_code, gate_prompt(job, suffix=suffix))
    if job.status is JobStatus.COMPLETED:
        return Outcome(job.status, EXIT_COMPLETED, f"job completed; change note {job.note_path}")
    if job.status is JobStatus.CANCELLED:
        return Outcome(job.status, EXIT_CANCELLED, "job cancelled")
    if job.status is JobStatus.CANCEL_REQUESTED:  # accepted, not a failure: it ends cancelled
        return Outcome(job.status, EXIT_CANCELLED,
                       "cancel requested: the job stops at the next safe point")
    message = job.error.message if job.error else f"job is {job.status}"
    return Outcome(job.status, EXIT_FAILED, message)


@dataclass(frozen=True)
class Base:
    """Where a job starts: a branch, its commit, and the config read from it."""

    branch: str
    sha: str
    config: RepoConfig


def local_base(repo: Repository) -> Base:
    """The checkout's current branch and commit (local mode)."""
    sha = repo.resolve("HEAD")
    if sha is None:
        raise BadInputError("the repository has no commits yet",
                            hint="commit your code first; Stepwise works from a commit")
    return Base(branch=repo.current_branch() or "HEAD", sha=sha,
                config=load_config(repo.show_file(sha, CONFIG_PATH)))


def number_ranges(numbers: list[int]) -> str:
    """[1, 2, 3, 5] -> "1–3, 5"."""
    parts: list[str] = []
    start = prev = numbers[0]
    for number in [*numbers[1:], None]:
        if number is not None and number == prev + 1:
            prev = number
            continue
        parts.append(str(start) if start == prev else f"{start}–{prev}")
        if number is not None:
            start = prev = number
    return ", ".join(parts)


def resume_message(job: Job) -> str:
    """"Resumed at batch 7 of 12; batches 1–6 are committed" (from the record, not a guess)."""
    done = [b.number for b in job.batches if b.status is BatchStatus.COMPLETED]
    nxt = next((b.number for b in job.batches if b.status not in FINISHED_BATCH_STATUSES), None)
    where = f"batch {nxt} of {len(job.batches)}" if nxt else "the final review"
    committed = "no batch is committed yet" if not done else (
        f"batch {done[0]} is committed" if len(done) == 1 else
        f"batches {number_ranges(done)} are committed")
    return f"Resumed at {where} after an interruption; {committed}."


def check_runnable(issue: IssueTask, config: RepoConfig) -> None:
    """Refuse at once (bad input) a `run` program the config would refuse at every batch."""
    if issue.spec.run is not None:
        refusal = refusal_reason(split_command(issue.spec.run), config.allow_commands)
        if refusal is not None:
            raise BadInputError(f"spec field `run` cannot run: {refusal}",
                                hint="use an allowed program, or allow it in .github/stepwise.yml",
                                code="invalid_spec")


def create_job(issue: IssueTask, number: int, services: Services, *,
               base: Base | None = None, repo_name: str | None = None,
               recover: bool = True) -> Job:
    """A new job record for `issue`, on a new branch at `base` (default: the checkout's HEAD)."""
    repo = services.repository
    if issue.spec.recipe is Recipe.LLM:
        (services.llm or load_llm_settings()).require()  # exit 2 naming what is missing
    base = base or local_base(repo)
    base_sha, config = base.sha, base.config
    check_runnable(issue, config)
    plan_scope(repo, base_sha, issue.spec, config)  # a plan that can change nothing: exit 2
    now = services.clock()
    job_id = f"{number}-{uuid.uuid4().hex[:12]}"
    note_path = f"{config.notes_dir}/{now:%Y%m%dT%H%M%SZ}-issue-{number}.md"
    # Recover a job whose record was lost; never when its record exists (e.g. it completed).
    orphan = find_orphan(repo, number, issue.spec.digest(), config.notes_dir) if recover else None
    if orphan is not None:
        # The record was lost but the branch remembers: same id, so its batches are adopted.
        job_id, branch, base_sha = orphan.job_id, orphan.branch, orphan.base_sha
        now = orphan.created_at or now
        note_path = orphan.note_path or note_path
    else:
        branch = f"stepwise/issue-{number}"
        run = 1
        while repo.branch_head(branch) is not None:
            run += 1
            branch = f"stepwise/issue-{number}-{run}"
        repo.create_branch(branch, base_sha)
    return Job(
        id=job_id, number=number, title=issue.title,
        repo=repo_name or str(repo.root), created_at=now, updated_at=services.clock(), spec=issue.spec,
        spec_digest=issue.spec.digest(), spec_text=issue.spec_text, config=config,
        base_branch=base.branch, base_sha=base_sha, branch=branch,
        head_sha=base_sha, note_path=note_path,
    )


def timeout_words(attempt: Attempt, error: ErrorInfo | None, limit: int) -> str:
    """"; `cmd` timed out ... command_timeout" when the attempt failed on a timeout, else ""."""
    timed = next((c.display for c in attempt.commands if c.timed_out), None)
    edit = (error.evidence.get("command") if error else None) or {}
    if timed is None and isinstance(edit, dict) and edit.get("timed_out"):
        timed = " ".join(str(arg) for arg in edit.get("argv", []))
    if timed is None:
        return ""
    return (f"; `{timed}` timed out (command_timeout is {limit} s in .github/stepwise.yml: "
            "raise it if the command needs longer)")


class Engine:
    """Advances one job; owns its worktree for the life of the object."""

    def __init__(self, services: Services, job: Job, *, auto_approve: bool = False) -> None:
        self.services = services
        self.job = job
        self.auto_approve = auto_approve
        self._runner: AttemptRunner | None = None

    # -- record keeping ---------------------------------------------------------------------
    def now(self) -> datetime:
        return self.services.clock()

    def save(self, *, touched: Iterable[int] | None = None) -> None:
        """Write the record; `touched` names the only batches changed since the last save
        (None: any may have changed). Tests run with STEPWISE_STORE_CHECK=1, which proves it."""
        self.job.updated_at = self.now()
        try:
            # The store bumps `version` on this object; keep using it (callers hold its batches).
            self.services.store.save(self.job, touched=None if touched is None else set(touched))
        except ConflictError:
            stored = self.services.store.reload(self.job)
            if stored is not None and stored.status is JobStatus.CANCEL_REQUESTED:
                raise CancelSignal from None
            raise

    def event(self, kind: str, message: str, batch: int | None = None) -> None:
        self.job.events.append(Event(at=self.now(), kind=kind, message=message, batch=batch))

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
            worktree = repo.open_worktree(path, self.job.head_sha)
            policy = sandbox_policy(self.job.config,
                                    hidden=(repo.git_dir, *self.services.hidden_paths),
                                    should_stop=self.cancel_requested,
                                    network_allow=self.network_allow(),
                                    deny_hosts=self.services.network_deny_hosts)
            editor = editor_for(self.job.spec, sandbox=self.services.sandbox, policy=policy,
                                llm=self.services.llm)
            self._runner = AttemptRunner(repo, worktree, self.services.sandbox, policy, editor,
                                         self.services.clock,
                                         environments=self.services.environments)
            self._runner.notify = lambda text: self.publish(Publication.NOTICE, text)
        return self._runner

    @property
    def worktree(self) -> Worktree:
        return self.runner.worktree

    def network_allow(self) -> list[str]:
        """The hosts the egress proxy admits: `network_allow`, or by default the registries of
        the ecosystems the repository uses (read from its files only when the network is on)."""
        config = self.job.config
        if not config.network or config.network_allow:
            return list(config.network_allow)
        return list(default_allowlist(self.services.repository.tracked_files(self.job.base_sha)))

    def close(self) -> None:
        if self._runner is not None:
            self._runner.worktree.remove()
            self._runner = None

    # -- the loop ---------------------------------------------------------------------------
    def advance(self, *, max_steps: int | None = None) -> Outcome:
        """Run until the job reaches a gate or ends (or `max_steps` steps were taken).

        The record is saved after every step; a job stopped by `max_steps` is still `running`
        and its outcome's exit code is 0.
        """
        steps = 0
        try:
            while True:
                if max_steps is not None and steps >= max_steps and not self.job.is_terminal \
                        and self.job.status is not JobStatus.AWAITING_HUMAN:
                    return Outcome(self.job.status, 0, f"job is {self.job.status}")
                steps += 1
                status = self.job.status
                if status is JobStatus.AWAITING_HUMAN and self._auto_pass():
                    continue
                if status in (JobStatus.AWAITING_HUMAN, JobStatus.COMPLETED,
                              JobStatus.CANCELLED, JobStatus.FAILED):
                    return outcome_of(self.job, suffix=self.services.command_suffix)
                if status is JobStatus.CANCEL_REQUESTED:
                    raise CancelSignal
                if status is JobStatus.INTERRUPTED:
                    self.job.set_status(JobStatus.RUNNING if self.job.approved_digest
                                        else JobStatus.PLANNING)
                    self.publish(Publication.RESUMED, resume_message(self.job))
                if status is JobStatus.QUEUED:
                    self.job.set_status(JobStatus.PLANNING)
                    self.save(touched=())
                if self.job.status is JobStatus.PLANNING:
                    self.plan()
                else:
                    self.step()
        except (CancelSignal, CommandCancelled):
            return self.finish_cancel()
        except StepwiseError as exc:
            if exc.retry_class is RetryClass.DO_NOT_RETRY:
                return self.fail(exc.info())
            raise
        finally:
            self.close()

    def _auto_pass(self) -> bool:
        from jobs.domain.gates import Verb, apply_verb

        gate = self.job.gate
        if not self.auto_approve or gate is None or gate.kind not in (Gate.PLAN, Gate.MILESTONE):
            return False
        if gate.kind is Gate.PLAN and self.job.baseline_ok is False:
            # A failing baseline is shown to a human, never waved through: say so.
            self.publish(Publication.NOTICE, "--yes does not pass the plan gate: "
                         + baseline_failure(self.job))
            return False
        self.event("gate", f"{gate.id} passed by --yes")
        apply_verb(self.job, Verb.APPROVE)
        self.save(touched=())
        self.publish(Publication.NOTICE, f"gate {gate.id} passed (--yes)")
        return True

    def apply_pending_issue(self) -> None:
        """Adopt an issue text that changed since the job was planned (see `spec_changed`)."""
        pending, self.job.pending_issue = self.job.pending_issue, None
        if pending is None:
            return
        issue = parse_issue(pending.title, pending.body)
        job = self.job
        job.title, job.spec, job.spec_text = issue.title, issue.spec, issue.spec_text
        job.spec_digest, job.approved_digest = issue.spec.digest(), None
        self.event("plan", "re-planning with the changed spec")

    def plan(self) -> None:
        """Plan the work left: a re-plan keeps finished batches and never redoes their files."""
        self.apply_pending_issue()
        job, repo = self.job, self.services.repository
        head = job.head_sha
        finished = [b for b in job.batches if b.status in FINISHED_BATCH_STATUSES]
        scope, job.left_out = plan_scope(repo, head, job.spec, job.config)
        done = {path for b in finished for path in b.files}
        todo = [path for path in scope if path not in done]
        planned = build_plan(
            scope_files=todo, contents=contents_for_patterns(repo, head, todo, job.spec.find),
            find=job.spec.find,
            batch_size=job.spec.batch_size or job.config.batch_size,
            batches_per_milestone=job.config.batches_per_milestone,
        )
        first_milestone = max((b.milestone for b in finished), default=0)
        # The kept milestones are behind the job: approving the new plan covers them.
        job.approved_milestones = sorted({*job.approved_milestones, *range(1, first_milestone + 1)})
        job.batches = finished + [
            Batch(number=len(finished) + p.number, milestone=first_milestone + p.milestone,
                  files=list(p.files), targets=p.targets)
            for p in planned.batches
        ]
        job.scope_files = scope
        job.target_count = planned.target_count
        self.run_baseline()
        self.event("plan", f"{len(planned.batches)} batches planned"
                   + (f", {len(finished)} finished batches kept" if finished else ""))
        self.publish(Publication.PLAN, render_plan(job))
        # An issue written or edited by someone without write access is always shown first.
        trusted_skip = (not job.config.require_plan_approval and job.baseline_ok is not False
                        and not job.extra.get("untrusted_spec"))
        if job.approved_digest == job.spec_digest:
            trusted_skip = True  # approved before (a job rebuilt from its branch)
        if trusted_skip:
            job.approved_digest = job.spec_digest
            job.set_status(JobStatus.RUNNING)
            self.save()
        elif job.baseline_ok is False:
            self.open(Gate.PLAN, "the plan is ready, but " + baseline_failure(job),
                      report=baseline_report(job))
        else:
            self.open(Gate.PLAN, "the plan is ready for review")

    def run_baseline(self) -> None:
        runner = self.runner
        self.worktree.reset(self.job.head_sha)
        self.job.baseline_sha = self.job.head_sha
        failure = runner.ensure_setup(self.job)
        from jobs.engine.attempt import run_commands

        evidence = [] if failure is None else [failure]
        if failure is None:
            evidence, failure = run_commands(runner.sandbox, self.job.config.validate_argvs(),
                                             cwd=self.worktree.path, policy=runner.policy)
        self.job.baseline = evidence
        self.job.baseline_ok = failure is None

    def open(self, kind: Gate, reason: str, *, batch: int | None = None,
             milestone: int | None = None, report: ErrorInfo | None = None,
             touched: Iterable[int] | None = None) -> None:
        open_gate(self.job, kind, reason=reason, now=self.now(), batch=batch,
                  milestone=milestone, report=report)
        self.event("gate", f"{self.job.gate.id if self.job.gate else kind}: {reason}", batch)
        self.services.forge.expect(self.job, Publication.GATE)  # owed before the job waits
        self.save(touched=touched)
        self.publish(Publication.GATE, gate_prompt(self.job, suffix=self.services.command_suffix))

    def step(self) -> None:
        """Do the next piece of work: sync with the branch, a batch, a milestone end or the end."""
        self.check_cancel()
        if branch_sync.sync(self):
            return
        job = self.job
        pending = [b for b in job.batches if b.status in (BatchStatus.PENDING,
                   BatchStatus.IN_PROGRESS, BatchStatus.FAILED)]
        if not pending:
            review.finish(self)
            return
        if job.baseline_ok is False:
            recheck_baseline(self)  # approved while the baseline failed: is it fixed now?
            return
        batch = pending[0]
        previous = batch.milestone - 1
        if previous >= 1 and previous not in job.approved_milestones:
            self.milestone_gate(previous)
            return
        self.run_batch(batch)

    def milestone_gate(self, milestone: int) -> None:
        commit_note(self, f"milestone {milestone}/{self.job.milestone_count}")
        reason = f"milestone {milestone} of {self.job.milestone_count} is done"
        # The report shows the gate the job is about to wait at, not `running`; it is published
        # before the gate is saved, so a failed publication is retried with the step.
        waiting = self.job.model_copy()  # shallow: open_gate only sets fields of the copy
        open_gate(waiting, Gate.MILESTONE, reason=reason, now=self.now(), milestone=milestone)
        self.publish(Publication.MILESTONE_REPORT, render_card(waiting, fold_finished=False,
                                                               with_prompt=False))
        self.open(Gate.MILESTONE, reason, milestone=milestone, touched=())

    def run_batch(self, batch: Batch) -> None:
        job = self.job
        settle_budget_gate(job)  # an approved `budget` gate grants one more budget
        if batch.status is not BatchStatus.IN_PROGRESS:
            batch.set_status(BatchStatus.IN_PROGRESS)
        stale = batch.last_attempt
        if stale is not None and stale.finished_at is None:  # its worker died mid-attempt
            stale.outcome, stale.finished_at = "interrupted", self.now()
        attempt = Attempt(number=len(batch.attempts) + 1, started_at=self.now())
        batch.attempts.append(attempt)
        self.save(touched=[batch.number])
        self.publish(Publication.NOTICE, f"batch {batch.number}/{len(job.batches)} "
                     f"(attempt {attempt.number}): {files_label(batch.files)}")
        outcome = self.runner.run(job, batch, attempt)
        attempt.finished_at = self.now()
        attempt.outcome = outcome.result.value
        self.record(batch, attempt, outcome)

    def record(self, batch: Batch, attempt: Attempt, outcome: AttemptOutcome) -> None:
        job = self.job
        touched = [batch.number, *outcome.touched]
        if outcome.result is Result.COMMITTED:
            job.head_sha = outcome.commit or job.head_sha
            batch.commit, batch.leftovers = outcome.commit, outcome.leftovers
            record_changes(self.services.repository, job, batch, attempt)
            batch.consecutive_failures = 0
            batch.set_status(BatchStatus.COMPLETED)
            self.event("batch", f"batch {batch.number} committed", batch.number)
            self.save(touched=touched)
            self.publish(Publication.PROGRESS, render_card(job))
        elif outcome.result is Result.SKIPPED:
            batch.set_status(BatchStatus.SKIPPED)
            batch.reason = outcome.reason
            self.event("batch", f"batch {batch.number} skipped: {outcome.reason}", batch.number)
            self.save(touched=touched)
        elif outcome.result is Result.GATED and outcome.gate is not None:
            batch.set_status(BatchStatus.PENDING)
            if outcome.gate is Gate.BUDGET:
                job.llm.budget_gate_batch = batch.number
            limit = f" (the limit: max_batch_lines is {job.config.max_batch_lines} in " \
                ".github/stepwise.yml)" if outcome.gate is Gate.LARGE_CHANGE else ""
            self.open(outcome.gate, f"batch {batch.number}: {outcome.reason}{limit}",
                      batch=batch.number, touched=touched)
        else:
            attempt.error = outcome.error
            batch.consecutive_failures += 1
            batch.set_status(BatchStatus.FAILED)
            self.event("attempt", f"batch {batch.number} attempt {attempt.number} failed: "
                       f"{outcome.error.code if outcome.error else 'unknown'}", batch.number)
            code = outcome.error.code if outcome.error else ""
            deterministic = DETERMINISTIC_FOR_LLM if job.spec.recipe is Recipe.LLM \
                else DETERMINISTIC_FAILURES
            if code in deterministic:
                self.open(Gate.FAILURE, f"batch {batch.number} failed with `{code}`, which "
                          "would fail the same way again, so it is not retried",
                          batch=batch.number, report=outcome.error, touched=touched)
            elif batch.consecutive_failures >= job.config.max_failed_attempts:
                failures = batch.consecutive_failures
                self.open(Gate.FAILURE, f"batch {batch.number} failed " + (
                          "once" if failures == 1 else f"{failures} times in a row")
                          + timeout_words(attempt, outcome.error, job.config.command_timeout),
                          batch=batch.number, report=outcome.error, touched=touched)
            else:
                self.save(touched=touched)

    # -- endings ----------------------------------------------------------------------------
    def fail(self, error: ErrorInfo) -> Outcome:
        self.job.error = error
        if self.job.status is not JobStatus.FAILED:
            self.job.set_status(JobStatus.FAILED)
        self.event("failed", error.message)
        self.save(touched=())
        self.publish(Publication.SUMMARY, render_card(self.job))
        return outcome_of(self.job, suffix=self.services.command_suffix)

    def cancel_now(self) -> Outcome:
        """Record a cancellation made while nothing was running, with the note."""
        try:
            return self.finish_cancel()
        finally:
            self.close()

    def finish_cancel(self) -> Outcome:
        stored = self.services.store.reload(self.job)
        if stored is not None:
            self.job = stored
        branch_sync.adopt_only(self)
        if self.job.status is not JobStatus.CANCELLED:
            if self.job.status is not JobStatus.CANCEL_REQUESTED:
                self.job.set_status(JobStatus.CANCEL_REQUESTED)
            self.job.set_status(JobStatus.CANCELLED)
        for batch in self.job.batches:
            if batch.status is BatchStatus.IN_PROGRESS:
                batch.set_status(BatchStatus.PENDING)
                attempt = batch.last_attempt
                if attempt is not None and attempt.finished_at is None:
                    attempt.outcome, attempt.finished_at = "cancelled", self.now()
        self.event("cancelled", "job cancelled")
        self.save()
        if any(b.commit for b in self.job.batches) and self.services.repository.branch_head(
            self.job.branch
        ):
            commit_note(self, "cancelled")
        self.publish(Publication.SUMMARY, render_card(self.job))
        return outcome_of(self.job, suffix=self.services.command_suffix)


def state_dir_of(repo: Path) -> Path:
    return Repository(repo).state_dir
