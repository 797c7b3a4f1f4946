"""One attempt at one batch: edit, guard, validate, check completion, commit exactly what was validated."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path

from jobs.adapters.sandbox_view import REPO_MOUNT
from jobs.basics.errors import PlatformWait, RetryClass, StepwiseError
from jobs.decisions.guard import GuardPolicy, GuardVerdict, Rule, check_diff
from jobs.decisions.plan import compile_patterns, matching_lines, select_scope
from jobs.engine.attempt_outcome import AttemptOutcome as AttemptOutcome  # re-exported
from jobs.engine.attempt_outcome import (
    EditGated,
    attempt_dir,
    command_failed_outcome,
    failed_outcome,
    log_entry,
    write_attempt_artifacts,
)
from jobs.engine.attempt_outcome import Result as Result  # re-exported
from jobs.engine.discovery import never_in_scope
from jobs.engine.failure_check import examined
from jobs.engine.validation_hooks import (
    TreeUnderTest,
    ValidationHook,
    ValidationRequest,
    ValidationResult,
    VerifyHook,
)
from jobs.inputs.config import RepoConfig
from jobs.inputs.recipes import rules_for
from jobs.inputs.sandboxing import EnvironmentLayer, SandboxPolicy
from jobs.inputs.spec import DoneWhen
from jobs.kernel import trailers
from jobs.kernel.job import Batch, Job
from jobs.kernel.model import BatchStatus, Gate, GateKind
from jobs.kernel.records import Attempt, CommandEvidence, Target, command_evidence, line_text
from jobs.notes.progress import files_label
from jobs.ports import Checkout, Sandbox, Workspace
from jobs.recipes import EditError, Editor, EditRequest, EditResult
from jobs.recipes.base import CommandCancelled

NOTHING_TO_CHANGE = "nothing to change"

# The editor's `apply` as the features' `edit` hooks wrap it (jobs/engine/context.py): given
# the batch, the attempt and the request, it returns what the editor returns.
EditCall = Callable[[Batch, Attempt, EditRequest], EditResult]
# The job's environment as the environments feature gives it (jobs/features/environments): the
# layer laid read-only over every later command, or the setup command that failed.
EnvironmentCall = Callable[[Job, SandboxPolicy],
                           tuple[EnvironmentLayer | None, CommandEvidence | None]]


def guard_policy(config: RepoConfig, approved: list[GateKind]) -> GuardPolicy:
    allow_deletions = config.allow_deletions
    if Gate.DELETION in approved:
        allow_deletions = True
    return GuardPolicy(
        allow_deletions=allow_deletions,
        allow_new_files=config.allow_new_files,
        allow_test_edits=config.allow_test_edits,
        allow_manifest_edits=config.allow_manifest_edits,
        protected_paths=tuple(config.protected_paths),
        max_batch_lines=10**9 if Gate.LARGE_CHANGE in approved else config.max_batch_lines,
    )


def sandbox_policy(config: RepoConfig, *, hidden: tuple[Path, ...],
                   repository: tuple[Path, ...] = (),
                   should_stop: Callable[[], bool] | None = None,
                   network_allow: Sequence[str] = (),
                   deny_hosts: Sequence[str] = (),
                   extra_env: Mapping[str, str] | None = None) -> SandboxPolicy:
    """The policy of validation and codemods (setup's differs only in `network`); `extra_env`
    is what Stepwise adds (the version from git), below the config's own `env`."""
    return SandboxPolicy(
        allow_commands=tuple(config.allow_commands), network=config.command_network,
        network_allow=tuple(network_allow), network_deny_hosts=tuple(deny_hosts),
        timeout=float(config.command_timeout), env={**(extra_env or {}), **config.env},
        hidden_paths=hidden, repository_paths=repository,
        should_stop=should_stop,
    )


def commit_message(job: Job, batch: Batch, summary: str) -> str:
    return (
        f"stepwise(#{job.number}): batch {batch.number}/{len(job.batches)} — "
        f"{files_label(batch.files, markdown=False)}\n\n{summary}\n\n"
        + trailers.trailer_lines((trailers.JOB, job.id), (trailers.BATCH, batch.number),
                                 (trailers.MILESTONE, batch.milestone),
                                 (trailers.SPEC, job.spec_digest[:16]))
    )


def run_commands(sandbox: Sandbox, argvs: list[list[str]], *, cwd: Path, policy: SandboxPolicy,
                 logs: list[str] | None = None, request: ValidationRequest | None = None,
                 ) -> tuple[list[CommandEvidence], CommandEvidence | None]:
    """Run each command in order, stopping at the first failure; return evidence and the failure
    (`logs` gets each command's output as far as it was kept, for a failed attempt's log).
    `request` adds a validation hook's environment, writable directories and options to each
    command; the evidence names the command as the config wrote it."""
    evidence: list[CommandEvidence] = []
    for index, argv in enumerate(argvs):
        added = request.environment(index) if request is not None else {}
        ran_with = replace(policy, env={**policy.env, **added}) if added else policy
        result = sandbox.run(request.argv(index, argv) if request is not None else argv,
                             cwd=cwd, policy=ran_with,
                             writable=request.writable if request is not None else ())
        result = replace(result, argv=tuple(argv))
        if result.cancelled:
            raise CommandCancelled(result.summary())
        if logs is not None:
            logs.append(log_entry(result))
        item = command_evidence(result)
        evidence.append(item)
        if item.exit_code != 0 or item.timed_out:
            return evidence, item
    return evidence, None


@dataclass
class AttemptRunner:
    """Carries out attempts in one worktree; setup runs again after each reset of its files."""

    repository: Workspace
    worktree: Checkout
    sandbox: Sandbox
    policy: SandboxPolicy
    editor: Editor
    clock: Callable[[], datetime]
    setup_at: int | None = None  # the worktree's reset count when `setup` last succeeded
    # The cached environment (the environments feature's hook, when the job has `setup` and a
    # cache is wired); None (or no bubblewrap): `setup` runs in the worktree again after each
    # reset, since nothing can be laid over it read-only.
    environment: EnvironmentCall | None = None
    edit: EditCall | None = None  # the editor's apply within the features' `edit` hooks
    # The features' hooks around the validation of a batch's candidate tree and just before it
    # is committed (jobs/engine/validation_hooks.py); `current` is the batch and attempt being
    # run, so a validation asked for during the edit (llm's checks) is measured the same way.
    validation: ValidationHook | None = None
    verify: VerifyHook | None = None
    current: tuple[Batch, Attempt] | None = None
    widened: set[int] = field(default_factory=set)  # batches that gave files to a wider one
    notify: Callable[[str], None] = lambda _text: None  # progress notices (the llm editor's rounds)
    # Lands a batch's commit after recording its validated tree (JobContext.land); None: moves
    # the branch without a record (nothing it lands can be adopted later).
    land: Callable[[Batch, str], str] | None = None
    # Validation results per tree, so a tree an editor already had checked is not run twice.
    validated: dict[str, tuple[list[CommandEvidence], CommandEvidence | None, str]] = \
        field(default_factory=dict)
    logs: dict[str, str] = field(default_factory=dict)  # each validated tree's output.log

    @property
    def cached_environments(self) -> bool:
        return self.environment is not None and self.sandbox.isolated

    def ensure_setup(self, job: Job) -> CommandEvidence | None:
        """Make the job's environment available; return the failing setup command, if any.

        With the cache, the environment is found or built once (the environments feature,
        jobs/features/environments) and laid over every later command read-only. Without it,
        `setup` runs in the worktree unless it ran since the files were last reset (a reset
        removes everything not in the tree)."""
        config = job.config
        if not config.setup:
            return None
        if self.cached_environments:
            if self.policy.environment is not None:
                return None
            assert self.environment is not None
            layer, failure = self.environment(job, self.policy)
            if failure is not None:
                return failure
            self.policy = replace(self.policy, environment=layer)
            return None
        if self.setup_at == self.worktree.resets:
            return None
        _, failure = run_commands(self.sandbox, config.setup_argvs(), cwd=self.worktree.path,
                                  policy=self.policy)
        self.setup_at = self.worktree.resets if failure is None else None
        return failure

    def validate(self, job: Job, tree: str) -> tuple[list[CommandEvidence], CommandEvidence | None,
                                                   str]:
        """Setup (once per worktree) and the validation commands for `tree`, run once per tree:
        the evidence, the failing command or None, and the failure's code."""
        if tree not in self.validated:
            setup_failure = self.ensure_setup(job)
            if setup_failure is not None:
                return [], setup_failure, "setup_failed"  # not kept: setup is retried
            logs: list[str] = []
            argvs = job.config.validate_argvs()

            def run(request: ValidationRequest) -> ValidationResult:
                evidence, failure = run_commands(self.sandbox, argvs, cwd=self.worktree.path,
                                                 policy=self.policy, logs=logs, request=request)
                return evidence, failure, "validation_failed"

            request = ValidationRequest(argvs=tuple(tuple(a) for a in argvs))
            if self.validation is not None and self.current is not None:
                batch, attempt = self.current
                self.validated[tree] = self.validation(job, batch, attempt,
                                                       self.under_test(job, tree), request, run)
            else:
                self.validated[tree] = run(request)
            self.logs[tree] = "\n".join(logs)
        return self.validated[tree]

    def under_test(self, job: Job, tree: str) -> TreeUnderTest:
        return TreeUnderTest(repository=self.repository, worktree=self.worktree, tree=tree,
                             parent=job.head_sha,
                             seen_at=REPO_MOUNT if self.sandbox.isolated else self.worktree.path,
                             isolated=self.sandbox.isolated)

    def remaining(self, job: Job, tree: str, files: list[str]) -> list[Target]:
        """The `find` matches left in `files` as they are in `tree`."""
        if not job.spec.find:
            return []
        patterns = compile_patterns(job.spec.find)
        texts = self.repository.read_texts(tree, files)
        return [Target(path=path, line=line, text=line_text(texts.get(path), line))
                for path in files for line in matching_lines(texts.get(path) or "", patterns)]

    def check(self, job: Job, batch: Batch, *, staged: list[str] | None = None) -> GuardVerdict:
        """Guard the staged diff. An approved `scope` gate widens the batch to the in-scope files
        the edit touched, and the other rules (deletion, size, ...) still apply to the result."""
        scope = set(job.scope_files)
        # Files the edit created inside `paths` are in scope too (for allow_new_files).
        staged = self.worktree.staged_paths() if staged is None else staged
        scope.update(select_scope(staged, paths=job.spec.paths, exclude=job.spec.exclude,
                                  never=never_in_scope(job.config)))
        diff = self.worktree.staged_diff()
        policy = guard_policy(job.config, batch.approved_gates)
        existing = functools.cache(lambda: self.repository.tracked_files(job.head_sha))
        verdict = check_diff(diff, batch_files=batch.files, scope_files=scope, policy=policy,
                             existing_files=existing)
        if Gate.SCOPE in batch.approved_gates and verdict.gate == Gate.SCOPE:
            wider = sorted({*batch.files, *(v.path for v in verdict.violations
                                           if v.rule is Rule.OUTSIDE_BATCH_IN_SCOPE)})
            verdict = check_diff(diff, batch_files=wider, scope_files=scope, policy=policy,
                                 existing_files=existing)
            if verdict.ok:
                moved = set(wider) - set(batch.files)
                batch.files = wider
                for other in job.batches:  # a file moved into this batch leaves its later one
                    if other is not batch and other.status is BatchStatus.PENDING and \
                            moved & set(other.files):
                        other.files = [f for f in other.files if f not in moved]
                        self.widened.add(other.number)
        if verdict.gate is not None and Gate(verdict.gate) in batch.approved_gates:
            verdict = replace(verdict, gate=None)
        return verdict

    def only_its_files_written(self, job: Job, commands: Sequence[CommandEvidence]) -> bool:
        """Whether nothing but the editor's own writes to the batch's files can have changed
        the worktree since the reset proved it is the head's: an editor that writes only the
        files it was given, in Stepwise's process (`replace`), ran no command, no setup ran
        before it, and every earlier command is gone (the isolated sandbox kills what a
        command leaves behind with its namespace; without it a process may outlive it)."""
        return bool(getattr(self.editor, "writes_only_request_files", False)) and not commands \
            and self.sandbox.isolated and not (self.cached_environments and job.config.setup)

    def run(self, job: Job, batch: Batch, attempt: Attempt) -> AttemptOutcome:
        self.widened = set()
        self.current = (batch, attempt)
        try:
            outcome = self._run(job, batch, attempt)
        except PlatformWait:
            raise  # not the attempt's fault: the worker waits for GitHub or parks the job
        except StepwiseError as exc:
            outcome = failed_outcome(exc.code, exc.retry_class, exc.message, exc.hint, exc.evidence)
        finally:
            self.current = None
        outcome.touched = sorted(self.widened)
        return outcome

    def _run(self, job: Job, batch: Batch, attempt: Attempt) -> AttemptOutcome:
        wt = self.worktree
        wt.reset(job.head_sha)
        before = self.remaining(job, job.head_sha, batch.files)
        if job.spec.find and not before:
            return AttemptOutcome(Result.SKIPPED, reason=NOTHING_TO_CHANGE)
        self.validated.clear()
        self.logs.clear()
        if self.cached_environments and (setup_failure := self.ensure_setup(job)) is not None:
            return command_failed_outcome("setup_failed", setup_failure, "a setup command failed")
        request = EditRequest(
            worktree=wt.path, files=tuple(batch.files), spec=job.spec, goal=job.title,
            targets=tuple(before),
            instructions=tuple(job.instructions), policy=self.policy,
        )
        try:
            edit = self.edit(batch, attempt, request) if self.edit is not None \
                else self.editor.apply(request)
        except EditGated as exc:
            return AttemptOutcome(Result.GATED, gate=exc.gate, reason=exc.reason)
        except EditError as exc:
            return failed_outcome(exc.code, exc.retry_class, exc.message, exc.hint, exc.evidence)
        attempt.edit_summary = edit.summary
        attempt.commands.extend(edit.commands)
        if self.only_its_files_written(job, edit.commands):
            wt.stage_files(batch.files)  # no walk of the whole worktree
        else:
            wt.stage_all()
        staged = wt.staged_paths()
        if not staged:
            if rules_for(job.spec.recipe).may_change_nothing and not before:
                return AttemptOutcome(Result.SKIPPED, reason=NOTHING_TO_CHANGE)
            return failed_outcome("edit_changed_nothing", RetryClass.NEEDS_HUMAN,
                            f"the edit changed nothing while {len(before)} targets remain",
                            "check that `replace` or `run` really changes the matched text",
                            {"remaining": [str(t) for t in before[:20]]})
        verdict = self.check(job, batch, staged=staged)
        attempt.lines_added, attempt.lines_removed = verdict.lines_added, verdict.lines_removed
        if verdict.violations and verdict.gate is None:
            return failed_outcome("guard_refused", RetryClass.NEEDS_HUMAN,
                            "the edit was refused by the diff guard:\n" + verdict.describe(),
                            "narrow the spec, or change the config flag named above",
                            {"violations": [f"{v.path}: {v.rule}" for v in verdict.violations]})
        if verdict.gate is not None:
            return AttemptOutcome(Result.GATED, gate=Gate(verdict.gate),
                                  reason=verdict.describe())
        tree = wt.write_tree()
        evidence, failure, code = self.validate(job, tree)  # at most once per tree
        attempt.commands.extend(evidence)
        if failure is not None:
            diff = wt.staged_diff()
            # Whose failure it is: its failing tests run again (None: a flaky test, and the
            # rest of the validation passed, so the batch goes on to its commit).
            failed = examined(self, job, batch, attempt, tree, failure, code)
            if failed is not None:
                if failed.error is not None and tree in self.logs:
                    kept = write_attempt_artifacts(
                        attempt_dir(self.repository.state_dir, job.number, batch.number,
                                    attempt.number),
                        log=self.logs[tree], diff=diff, root=self.repository.root)
                    failed.error.evidence.update(kept)
                    attempt.artifacts = list(kept.values())
                return failed
        left = [str(target) for target in self.remaining(job, tree, batch.files)]
        if left and job.spec.done_when is DoneWhen.NO_MATCHES:
            return failed_outcome("targets_remain", RetryClass.NEEDS_HUMAN,
                            f"{len(left)} targets still match after the edit: "
                            + ", ".join(left[:10]),
                            "widen `replace`/`run` so it handles these, or skip the batch",
                            {"remaining": left[:50]})
        attempt.remaining_targets = left
        if self.verify is not None and \
                (stopped := self.verify(job, batch, attempt, self.under_test(job, tree))) is not None:
            return stopped
        message = commit_message(job, batch, edit.summary)
        commit = wt.commit_tree(tree, job.head_sha, message)
        commit = self.land(batch, commit) if self.land is not None else \
            self.repository.advance_branch(job.branch, commit, job.head_sha)
        batch.summary = edit.summary
        batch.file_summaries = dict(edit.file_summaries)
        return AttemptOutcome(Result.COMMITTED, commit=commit, leftovers=left,
                              changed=sorted(staged))
