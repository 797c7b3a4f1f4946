"""The baseline: validation of the starting commit, and its re-run after `approve` when it failed."""

from __future__ import annotations

from jobs.domain.errors import ErrorInfo, RetryClass
from jobs.domain.job import Job
from jobs.domain.model import Gate
from jobs.domain.note_parts import baseline_failure, short
from jobs.engine.attempt import run_commands
from jobs.engine.context import JobContext
from jobs.ports import Publication


def baseline_hint(job: Job) -> str:
    """What to do about a failing baseline, in the job's mode: a config fix is reloaded at the
    plan gate, a fix to the environment is picked up by `approve`, a fix to the code needs a
    job from the fixed commit."""
    if job.server.installation_id is not None:
        return ("if `.github/stepwise.yml` is the cause (a `validate` or `setup` command, a "
                "program missing from `allow_commands`, `env`), fix it on the default branch and "
                "comment {{reload-config}} (the plan and the baseline are made again); "
                "otherwise fix the cause and {{approve}} (the baseline runs again "
                "first); a fix to the code needs a new job from the fixed commit")
    return ("if `.github/stepwise.yml` is the cause (a `validate` or `setup` command, a program "
            "missing from `allow_commands`, `env`), edit it (committed or not) and run "
            "{{approve --reload-config}} (the plan and the baseline are made again); "
            "if a program is missing from the PATH of the shell that runs stepwise, fix that "
            "and {{approve}} (the baseline runs again first); a fix to the code needs a "
            "new job from the fixed commit ({{cancel}}, commit the fix, `stepwise run` again)")


def baseline_report(job: Job) -> ErrorInfo:
    """The failing baseline as a gate report: what failed, its output tail, what to do."""
    failing = [c for c in job.baseline if c.exit_code != 0 or c.timed_out]
    tail = failing[-1].output_tail if failing else ""
    return ErrorInfo(
        code="baseline_failed", retry_class=RetryClass.NEEDS_HUMAN,
        message=f"validation fails on the starting commit {short(job.baseline_sha)}",
        hint=baseline_hint(job),
        evidence={"output_tail": tail})


def run_baseline(engine: JobContext) -> None:
    """Validate the job's head as it starts (setup first): the evidence the plan gate shows."""
    job, runner = engine.job, engine.runner
    engine.worktree.reset(job.head_sha)
    job.baseline_sha = job.head_sha
    failure = runner.ensure_setup(job)
    evidence = [] if failure is None else [failure]
    if failure is None:
        evidence, failure = run_commands(runner.sandbox, job.config.validate_argvs(),
                                         cwd=engine.worktree.path, policy=runner.policy)
    job.baseline = evidence
    job.baseline_ok = failure is None


def recheck_baseline(engine: JobContext) -> None:
    """Run a failed baseline again before the first batch; still failing: back to `plan`."""
    job = engine.job
    run_baseline(engine)
    if job.baseline_ok is not False:
        engine.event("plan", "the baseline passes now")
        engine.publish(Publication.NOTICE, f"the baseline passes now on "
                       f"{short(job.baseline_sha)}; starting the first batch")
        engine.save(touched=())
        return
    job.approved_digest = None
    engine.open(Gate.PLAN, "the plan was approved, but " + baseline_failure(job)
                + " (it was run again)", report=baseline_report(job))
