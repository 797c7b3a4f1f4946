"""The baseline: validation of the starting commit, and its re-run after `approve` when it failed."""

from __future__ import annotations

import hashlib
import json

from jobs.adapters.baselines import BaselineStore, RecordedBaseline, command_identity
from jobs.basics.errors import ErrorInfo, RetryClass
from jobs.engine.attempt import AttemptRunner, run_commands
from jobs.engine.context import JobContext
from jobs.kernel.feature_parts import baseline_inputs
from jobs.kernel.job import Job
from jobs.kernel.model import Gate
from jobs.notes.note_parts import baseline_failure, baseline_network_cause, short
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
            "if a program is missing from the PATH of the shell that runs stepwise, or the "
            "sandbox cannot show it (the output says where it resolved and why), fix that "
            "and {{approve}} (the baseline runs again first); a fix to the code needs a "
            "new job from the fixed commit ({{cancel}}, commit the fix, `stepwise run` again)")


# After a fix to the network settings: how the plan and the baseline are made again.
RELOAD_WORDS = {
    True: "a change to `.github/stepwise.yml` on the default branch is taken by {{reload-config}}, "
          "a change where Stepwise runs by {{approve}} (the baseline runs again first)",
    False: "a change to `.github/stepwise.yml` (committed or not) is taken by "
           "{{approve --reload-config}}, a change where Stepwise runs by {{approve}} "
           "(the baseline runs again first)",
}


def baseline_report(job: Job) -> ErrorInfo:
    """The failing baseline as a gate report: what failed, its output tail, what to do."""
    failing = [c for c in job.baseline if c.exit_code != 0 or c.timed_out]
    tail = failing[-1].output_tail if failing else ""
    cause = baseline_network_cause(job)
    return ErrorInfo(
        code="baseline_failed", retry_class=RetryClass.NEEDS_HUMAN,
        message=(f"{cause.what}: " if cause is not None else "")
        + f"validation fails on the starting commit {short(job.baseline_sha)}",
        hint=f"{cause.fix}; {RELOAD_WORDS[job.server.installation_id is not None]}"
        if cause is not None else baseline_hint(job),
        evidence={"output_tail": tail})


def baseline_key(job: Job, runner: AttemptRunner, tree: str) -> str:
    """What a baseline's result depends on: the tree, the commands, what they run with and what
    they resolve to where Stepwise runs (programs, Python prefix, variables)."""
    config = job.config
    identity = command_identity([*config.setup_argvs(), *config.validate_argvs()],
                                cwd=runner.worktree.path, policy=runner.policy)
    document = {
        "tree": tree, "setup": config.setup_argvs(), "validate": config.validate_argvs(),
        "env": dict(sorted(runner.policy.env.items())), "allow": sorted(config.allow_commands),
        "timeout": config.command_timeout, "network": str(config.network),
        "isolated": runner.sandbox.isolated, "resolved": identity, **baseline_inputs(job),
    }
    encoded = json.dumps(document, sort_keys=True, separators=(",", ":")).encode()
    return hashlib.sha256(encoded).hexdigest()[:40]


def run_baseline(engine: JobContext, *, reuse: bool = True) -> None:
    """Validate the job's head as it starts (setup first): the evidence the plan gate shows.

    A passing baseline recorded for the same key (`baseline_key`) by this or an earlier job is
    reused instead of running the suite again (`reuse=False`, after `approve` at a failing
    baseline, always runs it); a passing run is recorded for the next job."""
    job, runner = engine.job, engine.runner
    engine.worktree.reset(job.head_sha)
    job.baseline_sha = job.head_sha
    job.baseline_from = ""
    failure = runner.ensure_setup(job)
    evidence = [] if failure is None else [failure]
    if failure is None:
        store = BaselineStore(engine.services.repository.state_dir / "baselines")
        key = baseline_key(job, runner, engine.worktree.head_tree())
        recorded = store.get(key) if reuse and job.config.validate_argvs() else None
        if recorded is not None:
            job.baseline, job.baseline_ok = list(recorded.evidence), True
            job.baseline_from = f"{recorded.job}/{recorded.commit[:7]}"
            engine.event("plan", f"baseline reused from {job.baseline_from}")
            return
        evidence, failure = run_commands(runner.sandbox, job.config.validate_argvs(),
                                         cwd=engine.worktree.path, policy=runner.policy)
        if failure is None and evidence:
            store.put(key, RecordedBaseline(job=f"issue-{job.number}", commit=job.head_sha,
                                            evidence=evidence))
    job.baseline = evidence
    job.baseline_ok = failure is None


def recheck_baseline(engine: JobContext) -> None:
    """Run a failed baseline again before the first batch; still failing: back to `plan`."""
    job = engine.job
    run_baseline(engine, reuse=False)
    if job.baseline_ok is not False:
        engine.event("plan", "the baseline passes now")
        engine.publish(Publication.NOTICE, f"the baseline passes now on "
                       f"{short(job.baseline_sha)}; starting the first batch")
        engine.save(touched=())
        return
    job.approved_digest = None
    engine.open(Gate.PLAN, "the plan was approved, but " + baseline_failure(job)
                + " (it was run again)", report=baseline_report(job))


def forget_reused_baseline(engine: JobContext) -> None:
    """A batch failed the way a changed environment does, on the job's starting commit too:
    the recorded baseline this job reused is no longer true here, so no later job reuses it."""
    job = engine.job
    if not job.baseline_from:
        return
    store = BaselineStore(engine.services.repository.state_dir / "baselines")
    dropped = store.forget_matching(job.baseline_from)
    engine.event("plan", f"the environment changed: the baseline reused from {job.baseline_from} "
                 f"no longer holds ({dropped} recorded result dropped)")
