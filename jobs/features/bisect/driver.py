"""The engine side of split batches: `BisectHooks`, given to the engine by jobs/local.py and
bot/server (never imported by the engine). A failed multi-file batch is bisected here, one
validated subset at a time, each result saved before the next (rules.py decides which);
batches about to start are sized here with `batch_size: auto` (sizing.py, resize.py)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from jobs.basics import markdown_safe as md
from jobs.basics.errors import ErrorInfo, StepwiseError
from jobs.decisions.blame import failing_tests, rerun_argv
from jobs.decisions.ci import CiVerdict
from jobs.engine.attempt import (
    NOTHING_TO_CHANGE,
    AttemptOutcome,
    Result,
    commit_message,
    run_commands,
)
from jobs.engine.batch_run import record
from jobs.engine.context import JobContext
from jobs.features.bisect import by_ci
from jobs.features.bisect.candidates import candidate_tree
from jobs.features.bisect.notes import cause_words, set_aside_into, set_aside_words
from jobs.features.bisect.record import (
    BatchSplit,
    SplitCause,
    SplitState,
    SubsetResult,
    bisect_of,
    bisect_part,
)
from jobs.features.bisect.resize import resize_before
from jobs.features.bisect.rules import (
    Decided,
    Known,
    Run,
    extra_run_budget,
    next_step,
    next_step_named_first,
)
from jobs.features.bisect.strategy import ChoosePlan, choose, plan_words
from jobs.inputs.recipes import rules_for
from jobs.inputs.spec import DoneWhen
from jobs.kernel import trailers
from jobs.kernel.job import Batch, Job
from jobs.kernel.model import BatchStatus, Gate
from jobs.kernel.records import Attempt, CommandEvidence
from jobs.notes.progress import files_label, render_card
from jobs.ports import CiFailure, Publication

# What a split-off batch's failure at the gate says (with `replace` and `command` the
# bisection already proved it fails: it is not retried).
SET_ASIDE_REASON = "batch {number} (set aside from batch {source}): {why}; it was not retried"


def edit_commands(job: Job, failed: Attempt | None) -> list[CommandEvidence]:
    """The failed attempt's edit commands (a codemod's run): its commands before the
    validation run that failed (which stopped at its failing command)."""
    if failed is None or not failed.commands:
        return []
    validate = job.config.validate_argvs()
    last = failed.commands[-1].argv
    ran = validate.index(last) + 1 if last in validate else 0
    return list(failed.commands[:len(failed.commands) - ran])


@dataclass
class BisectHooks:
    """Split a failed multi-file batch (`enabled`), and size batches with `batch_size: auto`.

    `enabled=False` keeps today's behaviour (the whole batch retried, then the `failure`
    gate): the benchmark's baseline."""

    enabled: bool = True
    ci: by_ci.CiCandidates | None = None  # the CI feature's, for a split a red check started
    plan: ChoosePlan = choose  # how a failed batch is split (strategy.py)

    # -- the engine's hooks -----------------------------------------------------------------
    def before_batch(self, engine: JobContext, batch: Batch) -> bool:
        state = bisect_of(batch).split
        if state is not None and batch.status is BatchStatus.FAILED and not state.gave_up \
                and not state.committed:
            self._bisect(engine, batch)  # a crash or a stop left it unfinished: resume it
            return True
        return resize_before(engine, batch)

    def batch_failed(self, engine: JobContext, batch: Batch, attempt: Attempt,
                     outcome: AttemptOutcome) -> bool:
        job = engine.job
        code = outcome.error.code if outcome.error else ""
        deterministic = rules_for(job.spec.recipe).deterministic
        if bisect_of(batch).split_from is not None:
            if not deterministic or code != "validation_failed":
                return False  # a model may do better on the file alone: its attempts go on
            return self._set_aside_failed(engine, batch, outcome.error)
        if not self.enabled or len(batch.files) < 2 or code != "validation_failed" \
                or outcome.tree is None or bisect_of(batch).split is not None \
                or any(command.timed_out for command in attempt.commands):
            return False  # a timeout is not bisected: each half could take as long again
        if not deterministic and batch.consecutive_failures < job.config.max_failed_attempts:
            return False  # recipe llm: its attempts first
        self._start(engine, batch, attempt, outcome.tree, outcome)
        self._bisect(engine, batch)
        return True

    def batch_failed_ci(self, engine: JobContext, batch: Batch, sha: str,
                        failures: Sequence[CiFailure], error: ErrorInfo) -> bool:
        job = engine.job
        deterministic = rules_for(job.spec.recipe).deterministic
        if bisect_of(batch).split_from is not None:
            return deterministic and self._set_aside_failed(engine, batch, error)
        if not self.enabled or len(batch.files) < 2 or bisect_of(batch).split is not None:
            return False
        if not deterministic and batch.consecutive_failures < job.config.max_failed_attempts:
            return False
        state = by_ci.ci_split_state(engine, batch, sha, failures)
        if state is None:
            return False
        bisect_part(batch).split = state
        named = f"; first without {md.codes(state.named)}, which its annotations name" \
            if state.named else ""
        engine.event("split", f"batch {batch.number}: splitting after {state.reason}{named}",
                     batch.number)
        engine.save(touched=[batch.number])
        engine.publish(Publication.NOTICE, f"batch {batch.number} failed CI with all its "
                       f"files: validating parts of its edit to find the files that fail{named}")
        self._bisect(engine, batch)
        return True

    def candidate_checked(self, engine: JobContext, batch: Batch, sha: str,
                          verdict: CiVerdict) -> bool:
        if self.ci is None or not by_ci.is_candidate(batch, sha):
            return False
        result = by_ci.candidate_result(self.ci, engine, batch, sha, verdict)
        if result is not None:
            self._keep(engine, batch, result)
            self._bisect(engine, batch)
        return True

    def _set_aside_failed(self, engine: JobContext, batch: Batch,
                          report: ErrorInfo | None) -> bool:
        """A set-aside batch failed again (deterministic edits): its own `failure` gate."""
        engine.open(Gate.FAILURE, SET_ASIDE_REASON.format(
            number=batch.number, source=bisect_of(batch).split_from,
            why=set_aside_words(engine.job, batch)),
            batch=batch.number, report=report, touched=[batch.number])
        return True

    # -- the bisection ----------------------------------------------------------------------
    def _start(self, engine: JobContext, batch: Batch, attempt: Attempt, tree: str,
               outcome: AttemptOutcome) -> None:
        job = engine.job
        evidence = outcome.error.evidence if outcome.error else {}
        reason = f"`{evidence.get('command', 'validation')}` exited " \
            f"{evidence.get('exit_code', '?')} with all {len(batch.files)} files"
        state = SplitState(files=list(batch.files), edited_tree=tree, reason=reason)
        if job.spec.find and job.spec.done_when is DoneWhen.NO_MATCHES:
            left = {t.path for t in engine.runner.remaining(job, tree, batch.files)}
            if left:  # these could never complete: set aside at once
                state.causes.append(SplitCause(
                    files=[f for f in batch.files if f in left], kind="targets_remain"))
        if not state.causes:
            validation = attempt.commands[len(edit_commands(job, attempt)):]
            failed = validation[-1] if validation else None
            focus, focus_s, tests = _measured_focus(attempt, failed)
            whole_s = sum(c.duration_s for c in validation)
            plan = self.plan(len(batch.files), whole_s=whole_s, focus=focus, focus_s=focus_s)
            state.alone = plan.alone
            state.how = plan_words(plan, size=len(batch.files), tests=len(tests),
                                   whole_s=whole_s, focus_s=focus_s)
            state.results.append(SubsetResult(files=list(batch.files), passed=False, tree=tree,
                                              failed_command=str(evidence.get("command", "")),
                                              refocus=list(plan.focus)))
        bisect_part(batch).split = state
        how = f" ({state.how})" if state.how else ""
        engine.event("split", f"batch {batch.number}: splitting after {reason}{how}",
                     batch.number)
        engine.save(touched=[batch.number])
        engine.publish(Publication.NOTICE, f"batch {batch.number} failed with all its files: "
                       f"validating parts of its edit to find the files that fail{how}")

    def _bisect(self, engine: JobContext, batch: Batch) -> None:
        state = bisect_of(batch).split
        assert state is not None
        fixed = {p for c in state.causes if c.kind == "targets_remain" for p in c.files}
        files = [path for path in state.files if path not in fixed]
        budget = extra_run_budget(len(state.files))
        while True:
            known = _known(state)
            step = next_step_named_first(files, state.named, known) if state.by_ci \
                else next_step(files, known, alone=state.alone)
            if isinstance(step, Decided):
                self._finish(engine, batch, step)
                return
            if len(state.results) >= budget:
                self._give_up(engine, batch, f"{len(state.results)} subsets validated without "
                              "a consistent answer (a flaky check?)")
                return
            engine.check_cancel()
            subset = list(step.files)
            try:
                result = self._validate(engine, state, subset, list(step.focus))
            except StepwiseError as exc:
                self._give_up(engine, batch, exc.message)
                return
            if result is None:
                self._give_up(engine, batch, "a setup command failed")
                return
            if result.passed and state.by_ci and self.ci is not None and \
                    by_ci.push_candidate(self.ci, engine, batch, result):
                return  # CI judges it: candidate_checked goes on from its verdict
            self._keep(engine, batch, result)

    def _keep(self, engine: JobContext, batch: Batch, result: SubsetResult) -> None:
        state = bisect_of(batch).split
        assert state is not None
        state.results.append(result)
        verdict = "passed" if result.passed else f"failed (`{result.failed_command}`)"
        if result.focus:
            verdict += " on the failing tests"
        engine.event("split", f"batch {batch.number}: {len(result.files)} of "
                     f"{len(state.files)} files {verdict}", batch.number)
        engine.save(touched=[batch.number])
        engine.publish(Publication.NOTICE, f"batch {batch.number} split: "
                       f"{files_label(result.files)} ({len(result.files)} of "
                       f"{len(state.files)} files) {verdict}")

    def _validate(self, engine: JobContext, state: SplitState, files: list[str],
                  focus: list[str]) -> SubsetResult | None:
        """One candidate tree validated: whole, or on `focus` only (the failing tests)."""
        job, runner = engine.job, engine.runner
        tree = candidate_tree(runner.worktree, job.head_sha, state.edited_tree, files)
        if focus:
            if runner.ensure_setup(job) is not None:
                return None
            _, failure = run_commands(runner.sandbox, [focus], cwd=runner.worktree.path,
                                      policy=runner.policy)
            return SubsetResult(files=files, passed=failure is None, tree=tree,
                                failed_command=failure.display if failure else "", focus=focus)
        # Always run: files whose edit changed nothing give an equal tree, and a failing set
        # is validated again on purpose before files are called an interaction.
        runner.validated.pop(tree, None)
        # Under the validation hooks, as the batch's (its tests' report, its changed lines'
        # coverage): the part that lands has the evidence any batch has.
        batch = next(b for b in job.batches if bisect_of(b).split is state)
        last, before = batch.last_attempt, runner.current
        runner.current = (batch, last) if last is not None else None
        try:
            evidence, failure, code = runner.validate(job, tree)
        finally:
            runner.current = before
        if code == "setup_failed":
            return None
        refocus: list[str] = []
        if failure is not None and any(r.refocus for r in state.results):
            tests = failing_tests(failure)  # its parts are searched on its own failing tests
            refocus = rerun_argv(failure.argv, tests) if tests else []
        return SubsetResult(files=files, passed=failure is None, tree=tree,
                            failed_command=failure.display if failure else "",
                            commands=evidence if failure is None else [], refocus=refocus)

    def _give_up(self, engine: JobContext, batch: Batch, why: str) -> None:
        state = bisect_of(batch).split
        assert state is not None
        state.finished, state.gave_up = True, why
        last = batch.last_attempt
        engine.open(Gate.FAILURE, f"batch {batch.number} failed ({state.reason}); splitting "
                    f"it stopped: {why}", batch=batch.number,
                    report=last.error if last else None, touched=[batch.number])

    def _finish(self, engine: JobContext, batch: Batch, decided: Decided) -> None:
        job = engine.job
        state = bisect_of(batch).split
        assert state is not None
        if not state.finished:
            state.causes += [SplitCause(files=list(c.files), kind="interaction"
                                        if c.kind == "interaction" else "culprit")
                             for c in decided.causes]
            state.finished = True
        if not set_aside_into(job, batch):  # the set-aside batches exist before the commit
            milestone = max(b.milestone for b in job.batches if bisect_of(b).split_from is None)
            for cause in state.causes:
                set_aside = BatchSplit(split_from=batch.number, split_kind=cause.kind)
                job.batches.append(Batch(number=len(job.batches) + 1, milestone=milestone,
                                         files=list(cause.files),
                                         parts={BatchSplit.PART: set_aside}))
        batch.files = list(decided.passing)
        moved = ", ".join(state.set_aside)
        engine.event("split", f"batch {batch.number} split: set aside {moved}", batch.number)
        engine.save(touched=None)
        passing = list(decided.passing)
        reason = "split: every file was set aside into a batch of its own" if not passing \
            else None
        validated = state.result_of(passing) if passing else None
        if validated is not None and \
                validated.tree == engine.services.repository.tree_of(job.head_sha):
            # Never an empty commit: the edit changed only the files set aside.
            reason = (f"{NOTHING_TO_CHANGE}: the edit changed only the files set aside "
                      f"({', '.join(state.set_aside)}); {files_label(passing)} unchanged")
        if reason is not None:
            state.committed = True
            batch.set_status(BatchStatus.SKIPPED)
            batch.reason = reason
            engine.save(touched=[batch.number])
            engine.publish(Publication.PROGRESS, render_card(job, voice=engine.services.voice))
            return
        self._commit(engine, batch, passing)

    def _commit(self, engine: JobContext, batch: Batch, passing: list[str]) -> None:
        job, runner = engine.job, engine.runner
        state = bisect_of(batch).split
        assert state is not None
        validated = state.result_of(passing)
        tree = candidate_tree(runner.worktree, job.head_sha, state.edited_tree, passing)
        if validated is None or not validated.passed or validated.tree != tree:
            self._give_up(engine, batch, "the passing files' tree is not the one validated")
            return
        failed = batch.last_attempt
        summary = failed.edit_summary if failed else ""
        attempt = Attempt(number=len(batch.attempts) + 1, started_at=engine.now(),
                          finished_at=engine.now(), outcome=Result.COMMITTED.value,
                          edit_summary=summary,
                          commands=edit_commands(job, failed) + list(validated.commands))
        # The part that lands has its evidence like any batch (its tests against its parent's,
        # its shapes, its changed lines' coverage); a verdict that stops it ends the split.
        if runner.verify is not None and (stopped := runner.verify(
                job, batch, attempt, runner.under_test(job, tree))) is not None:
            why = stopped.reason or (stopped.error.message if stopped.error else "")
            self._give_up(engine, batch, f"its passing files stop at `{stopped.gate or 'verify'}`"
                                         f": {why}")
            return
        batch.attempts.append(attempt)
        message = commit_message(job, batch, summary + f"\n\nSplit: {state.reason}; set aside "
                                 + "; ".join(cause_words(c.kind, c.files, by_ci=state.by_ci)
                                            for c in state.causes))
        message += trailers.trailer_lines((trailers.SPLIT, ", ".join(state.set_aside)))
        changed = runner.worktree.staged_paths()
        commit = runner.worktree.commit_tree(tree, job.head_sha, message)
        # Server mode re-creates the commit through GitHub's API (signed): record what landed.
        commit = engine.land(commit, batch=batch)
        batch.summary = summary
        state.committed = True
        leftovers = [str(t) for t in runner.remaining(job, tree, passing)]
        record(engine, batch, attempt, AttemptOutcome(Result.COMMITTED, commit=commit,
                                                      leftovers=leftovers,
                                                      changed=sorted(changed)))


def _known(state: SplitState) -> Known:
    """Each validated subset's runs, oldest first, as the rules read them."""
    known: dict[frozenset[str], list[Run | bool]] = {}
    for result in state.results:
        known.setdefault(frozenset(result.files), []).append(
            Run(result.passed, tuple(result.focus), tuple(result.refocus)))
    return known


def _measured_focus(attempt: Attempt, failed: CommandEvidence | None,
                    ) -> tuple[list[str], float | None, list[str]]:
    """The command that runs only the failed validation's failing tests, what it took when
    the failure check re-ran it on the batch (None: not re-run), and those tests; nothing
    when the runner named none (jobs/decisions/blame.py)."""
    if failed is None:
        return [], None, []
    check = attempt.failure_check
    if check is not None and check.tests and check.reruns:
        # The command built from the failing one as the check built its re-run (not the re-run's
        # own argv, which may carry options for a report folder of its own).
        return rerun_argv(failed.argv, check.tests), check.reruns[0].duration_s, check.tests
    tests = failing_tests(failed)
    return (rerun_argv(failed.argv, tests), None, tests) if tests else ([], None, [])
