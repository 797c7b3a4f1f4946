"""The runs that tell whose a failed validation is (the decision and its words:
jobs/decisions/blame.py): the failing tests once more on the batch's tree, then once on its
parent's; at most two extra runs per failing batch, each the failing tests only where the
runner's report (or pytest's summary) names them all and pytest can run them by id."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from jobs.basics.errors import RetryClass
from jobs.decisions.blame import (
    NO_TESTS_RAN,
    NOT_THE_EDITS,
    Cause,
    blame_hint,
    blame_words,
    decide,
    failing_tests,
    looks_environmental,
    rerun_argv,
)
from jobs.engine.attempt_outcome import AttemptOutcome, command_failed_outcome, failed_outcome
from jobs.inputs.sandboxing import SandboxPolicy
from jobs.kernel.feature_parts import SET_ASIDE_FROM, batch_figures
from jobs.kernel.job import Batch, Job
from jobs.kernel.records import Attempt, CommandEvidence, FailureCheck, command_evidence
from jobs.ports import Checkout, Sandbox
from jobs.recipes.base import CommandCancelled

# Runs an argv where the worktree is now (the batch's tree) / on the parent's tree (None when
# setup failed there: nothing is known of the parent).
RunHere = Callable[[list[str]], CommandEvidence]
RunOnParent = Callable[[list[str]], CommandEvidence | None]


class Runner(Protocol):
    """What the re-runs need of the attempt's runner (jobs/engine/attempt.py AttemptRunner)."""

    sandbox: Sandbox
    policy: SandboxPolicy
    worktree: Checkout

    def ensure_setup(self, job: Job) -> CommandEvidence | None: ...


def examine(failure: CommandEvidence, *, parent: str, run_here: RunHere,
            run_on_parent: RunOnParent,
            present: Callable[[str], bool] = lambda path: True) -> FailureCheck:
    """Re-run what failed: on the batch (not for a failure the way an environment fails: a
    missing program does not come back), then, unless it passed, on the parent. `present`:
    whether a test id's file is in the worktree (an id whose file is not is not run alone: the
    whole command runs again)."""
    tests = failing_tests(failure)
    runnable = all(present(test.split("::", 1)[0]) for test in tests)
    argv = rerun_argv(failure.argv, tests if runnable else [])
    reruns: list[CommandEvidence] = []
    on_batch = None
    if not looks_environmental(failure):
        on_batch = run_here(argv)
        reruns.append(on_batch)
        if argv != failure.argv and on_batch.exit_code in NO_TESTS_RAN:
            # The ids ran no test (pytest could not find them): nothing is known, and a
            # second run of the same ids on the parent would fail alike; the edit's.
            return FailureCheck(cause=Cause.EDIT.value, command=failure.display, tests=tests,
                                parent=parent, reruns=reruns)
    on_parent = None
    if decide(failure, on_batch, None) is not Cause.FLAKY:
        on_parent = run_on_parent(argv)
        if on_parent is not None:
            reruns.append(on_parent)
    cause = decide(failure, on_batch, on_parent)
    return FailureCheck(cause=cause.value, command=failure.display, tests=tests, parent=parent,
                        reruns=reruns)


def _run_in(runner: Runner, cwd: Path, argv: list[str]) -> CommandEvidence:
    result = runner.sandbox.run(argv, cwd=cwd, policy=runner.policy)
    if result.cancelled:
        raise CommandCancelled(result.summary())
    return command_evidence(result)


def _run_all(runner: Runner, cwd: Path,
             argvs: list[list[str]]) -> tuple[list[CommandEvidence], CommandEvidence | None]:
    """Each command in order, up to the first that fails (the evidence, the failure)."""
    evidence: list[CommandEvidence] = []
    for argv in argvs:
        evidence.append(_run_in(runner, cwd, argv))
        if evidence[-1].exit_code != 0 or evidence[-1].timed_out:
            return evidence, evidence[-1]
    return evidence, None


def examined(runner: Runner, job: Job, batch: Batch, attempt: Attempt, tree: str,
             failure: CommandEvidence, code: str) -> AttemptOutcome | None:
    """The failed attempt's outcome once whose failure it is is known; None when a flaky test
    failed and the rest of the validation passed (the batch is committed, the flaky test kept
    in the attempt's `failure_check`). The worktree may be left at the parent's tree."""
    failed = command_failed_outcome(code, failure, "a setup command failed"
                                    if code == "setup_failed" else "validation failed")
    failed.tree = tree
    if code != "validation_failed" or SET_ASIDE_FROM in batch_figures(batch):
        return failed  # a file set aside by a split: the split showed it fails, the rest passes
    cwd = runner.worktree.path

    def on_parent(argv: list[str]) -> CommandEvidence | None:
        runner.worktree.restore(job.head_sha)
        if runner.ensure_setup(job) is not None:
            return None
        return _run_in(runner, cwd, argv)

    check = examine(failure, parent=job.head_sha, run_here=lambda argv: _run_in(runner, cwd, argv),
                    run_on_parent=on_parent, present=lambda path: (cwd / path).is_file())
    attempt.failure_check = check
    cause = Cause(check.cause)
    if cause is Cause.FLAKY:
        validate = job.config.validate_argvs()
        rest = validate[validate.index(failure.argv) + 1:] if failure.argv in validate else []
        more, still = _run_all(runner, cwd, rest)
        attempt.commands.extend([*check.reruns, *more])
        if still is None:
            return None
        failed = command_failed_outcome(code, still, "validation failed")
        failed.tree = tree
    elif cause in NOT_THE_EDITS:
        error = failed.error
        assert error is not None
        reused = job.baseline_from if job.head_sha == job.baseline_sha else ""
        failed = failed_outcome(
            NOT_THE_EDITS[cause], RetryClass.NEEDS_HUMAN,
            blame_words(cause, batch=batch.number, command=check.command, tests=check.tests,
                        parent=job.head_sha, baseline_from=reused),
            blame_hint(cause), error.evidence)
        failed.tree = tree
    return failed
