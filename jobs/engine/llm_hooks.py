"""The hooks an attempt lends the llm editor: check a candidate in place, restore, count calls."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from jobs.adapters.discovery import never_in_scope
from jobs.domain.globs import matches_any
from jobs.domain.guard import GuardVerdict
from jobs.domain.job import Batch, Job
from jobs.domain.records import Attempt, CommandEvidence, ModelCall, Target
from jobs.domain.spec import DoneWhen
from jobs.editors.base import CandidateReport, EditHooks
from jobs.editors.llm.accounting import record_usage, transcript_path
from jobs.editors.llm.feedback import UNCHANGED, command_feedback, guard_feedback, targets_feedback
from jobs.ports import Checkout, Workspace


class AttemptRunner(Protocol):
    """What the hooks use of the attempt's runner (jobs/engine/attempt.py's `AttemptRunner`,
    which imports this module: a protocol keeps the two free of a cycle)."""

    @property
    def repository(self) -> Workspace: ...

    @property
    def worktree(self) -> Checkout: ...

    @property
    def notify(self) -> Callable[[str], None]: ...

    def check(self, job: Job, batch: Batch) -> GuardVerdict: ...

    def validate(self, job: Job, tree: str) -> tuple[list[CommandEvidence],
                                                     CommandEvidence | None, str]: ...

    def remaining(self, job: Job, tree: str, files: list[str]) -> list[Target]: ...


def make_hooks(runner: AttemptRunner, job: Job, batch: Batch, attempt: Attempt) -> EditHooks:
    """Hooks bound to this attempt; the check is the runner's own guard, validation and
    completion check, so what the editor sees is what the runner will decide."""

    def record(call: ModelCall) -> None:
        attempt.llm_calls.append(call)
        record_usage(job, call)

    return EditHooks(
        check=lambda: check_candidate(runner, job, batch),
        restore=lambda: runner.worktree.reset(job.head_sha),
        record_call=record,
        notify=runner.notify,
        tokens_used=job.llm.tokens,
        budget_grants=job.llm.budget_grants,
        transcript=transcript_path(runner.repository.state_dir, job.number, batch.number,
                                   attempt.number),
        title=f"Stepwise #{job.number} — {job.title} — batch {batch.number}, attempt "
              f"{attempt.number} (job {job.id})",
        readable=readable_files(runner, job),
        llm_config=job.config.llm,
    )


REGULAR_MODES = ("100644", "100755")


def readable_files(runner: AttemptRunner, job: Job) -> tuple[str, ...]:
    """The tracked regular files at the job's head that no scope rule protects (no links,
    submodules, change notes, `.env*`, keys or other `protected_paths`)."""
    if job.spec.recipe != "llm" and job.spec.fallback != "llm":
        return ()
    never = never_in_scope(job.config)
    modes = runner.repository.tracked_modes(job.head_sha)
    return tuple(sorted(path for path, mode in modes.items()
                        if mode in REGULAR_MODES and not matches_any(path, never)))


def check_candidate(runner: AttemptRunner, job: Job, batch: Batch) -> CandidateReport:
    """Stage the worktree and judge it: guard, setup and validation (once per tree), targets."""
    worktree = runner.worktree
    worktree.stage_all()
    if not worktree.staged_paths():
        return CandidateReport(False, "unchanged", UNCHANGED)
    verdict = runner.check(job, batch)
    if not verdict.ok:
        kind = "gate" if verdict.gate is not None else "guard_refused"
        return CandidateReport(False, kind, guard_feedback(verdict, batch.files))
    tree = worktree.write_tree()
    _, failure, kind = runner.validate(job, tree)
    # Leave the files exactly as validated: what the commands wrote (caches, build output) must
    # not be staged with the edit when the runner stages the worktree again.
    worktree.restore(tree)
    if failure is not None:
        return CandidateReport(False, kind, command_feedback(failure, kind))
    if job.spec.done_when is DoneWhen.NO_MATCHES:
        left = [str(target) for target in runner.remaining(job, tree, batch.files)]
        if left:
            return CandidateReport(False, "targets_remain", targets_feedback(left))
    return CandidateReport(True)


def transcript_link(runner: AttemptRunner, job: Job, batch: Batch, attempt: Attempt) -> None:
    """Record where this attempt's transcript is, if the editor wrote one."""
    path = transcript_path(runner.repository.state_dir, job.number, batch.number, attempt.number)
    if path.is_file():
        try:
            attempt.transcript = str(path.relative_to(runner.repository.root))
        except ValueError:
            attempt.transcript = str(path)
