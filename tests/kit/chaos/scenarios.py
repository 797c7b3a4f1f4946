"""The other scenarios: the no-fault baseline, a Redis restart, GitHub faults, duplicated
deliveries."""

from __future__ import annotations

import contextlib
import random
import time
from collections import Counter
from pathlib import Path

from jobs.kernel.job import Job
from tests.kit.chaos.cluster import Cluster, open_cluster, using
from tests.kit.chaos.killing import wait_past_second_of
from tests.kit.chaos.results import ScenarioResult
from tests.kit.chaos.settings import FILES, STUCK_TIMEOUT_S, Log, quiet
from tests.kit.chaos.trial import MARKER, Trial, check
from tests.kit.chaos.watch import Watch, finished_count, wait_until_settled
from tests.kit.github_model import FakeRepo


def run_baseline(*, files: int = FILES, stuck_timeout_s: float = STUCK_TIMEOUT_S,
                 base: Path | None = None, cluster: Cluster | None = None,
                 log: Log = quiet) -> ScenarioResult:
    """One job with no faults: the control, and the expected duration of a job."""
    result = ScenarioResult("baseline")
    with using(cluster, base, files) as cluster:
        repo = cluster.new_repo("baseline")
        trial = Trial("baseline", repo.name)
        started = time.monotonic()
        cluster.label(repo)
        job = wait_until_settled(cluster, repo, timeout=stuck_timeout_s)
        trial.seconds = time.monotonic() - started
        result.trials.append(check(cluster, repo, trial, job))
    log(trial.line())
    return result



def run_redis_restart(trials: int = 1, *, expected_s: float, seed: int = 2,
                      downtime_s: float = 1.0, files: int = FILES,
                      stuck_timeout_s: float = STUCK_TIMEOUT_S, base: Path | None = None,
                      cluster: Cluster | None = None, log: Log = quiet,
                      restart_workers: bool = True) -> ScenarioResult:
    """Mid-job, SIGTERM redis-server and start it again on the same port and directory; restart
    the workers that exited because they lost Redis (with `restart_workers=False`, none is: a
    worker must ride the outage out itself, and one that exited is reported in the notes)."""
    rng = random.Random(seed)
    result = ScenarioResult("redis-restart")
    shared = cluster
    for index in range(trials):
        with using(shared, base, files) as cluster:
            repo = cluster.new_repo(f"redis{index + 1:02d}")
            trial = Trial("redis-restart", repo.name)
            exits: list[str] = []

            def tick(cluster: Cluster = cluster, exits: list[str] = exits) -> None:
                gone = cluster.ensure_workers() if restart_workers else \
                    cluster.workers.reap_exited()
                for proc, code, tail in gone:
                    exits.append(f"worker {proc.number} exited with {code}: {tail[-150:]}")

            with Watch(cluster, repo) as watch:
                started = time.monotonic()
                cluster.label(repo)
                moment = rng.uniform(0.3, 0.7) * expected_s
                time.sleep(max(0.0, started + moment - time.monotonic()))
                cluster.redis_server.stop()
                time.sleep(downtime_s)
                cluster.redis_server.start()
                restarted_at = time.monotonic()
                job = cluster.job(repo)  # what the append-only file kept
                before = finished_count(job) if job else 0
                trial.notes.append(f"Redis down at {moment:.1f}s for {downtime_s:.0f}s "
                                   f"({before} batches done)")
                job = wait_until_settled(cluster, repo, timeout=stuck_timeout_s, tick=tick)
                recovered = watch.progress_after(restarted_at, before)
                if recovered is not None:
                    trial.recover_s.append(recovered)
                trial.seconds = time.monotonic() - started
            trial.notes.append(f"{len(exits)} worker(s) exited and were restarted"
                               if exits else "no worker exited")
            trial.notes.append(f"RQ scheduler lock afterwards held by "
                               f"{cluster.scheduler_holder()[0]}")
            result.notes += exits
            check(cluster, repo, trial, job)
        log(trial.line())
        result.trials.append(trial)
    return result


def run_faults(trials: int = 1, *, rate: float = 0.2, seed: int = 3, token_endpoint: bool = True,
               files: int = FILES, stuck_timeout_s: float = STUCK_TIMEOUT_S,
               base: Path | None = None, cluster: Cluster | None = None, name: str | None = None,
               timings: dict[str, str] | None = None, log: Log = quiet) -> ScenarioResult:
    """`rate` of GitHub calls fail: 502 or a secondary rate limit before the call is handled,
    or (a third of the faults on writes) 502 after it was (every endpoint, the token endpoint
    and comment posting included, unless `token_endpoint=False`). Each job stops at the plan
    gate and at a milestone gate; the maintainer answers a gate only once its comment exists
    on GitHub (approve; `/stepwise retry` at a failure gate from a transient fault)."""
    result = ScenarioResult(name or ("faults" if token_endpoint else "faults-api"))
    fresh = contextlib.nullcontext(cluster) if cluster is not None and timings is None else \
        open_cluster(base, files=files, timings=timings)
    with fresh as opened:
        cluster = opened
        cluster.ensure_workers()
        cluster.wait_ready()
        cluster.gh.faults.clear()
        for index in range(trials):
            repo = cluster.new_repo(f"{result.name}{index + 1:02d}", require_plan_approval=True,
                                    batches_per_milestone=max(1, files // 2))
            trial = Trial(result.name, repo.name)
            answers: list[str] = []
            shown: dict[str, float] = {}
            taken_up: dict[str, float] = {}
            passed_by: set[str] = set()

            def on_gate(job: Job, tries: int, repo: FakeRepo = repo,
                        answers: list[str] = answers) -> bool:
                gate = job.gate
                if gate is None or tries >= 3:
                    return False
                if gate.kind.value in ("plan", "milestone"):
                    verb = "approve"
                elif gate.kind.value == "failure" and gate.report is not None and \
                        gate.report.retry_class.value == "auto_retry":
                    verb = "retry"
                else:
                    return False
                wait_past_second_of(gate.opened_at)
                answers.append(f"{verb}@{gate.kind.value}")
                cluster.comment(repo, f"/stepwise {verb}")
                return True

            cluster.gh.inject_faults(rate, seed=seed + index, token_endpoint=token_endpoint)
            try:
                started = time.monotonic()
                cluster.label(repo)
                job = wait_until_settled(cluster, repo, timeout=stuck_timeout_s, on_gate=on_gate,
                                         shown=shown, taken_up=taken_up, passed_by=passed_by)
                trial.seconds = time.monotonic() - started
            finally:
                cluster.gh.inject_faults(0.0)
            trial.notes.append(f"answers: {', '.join(answers) or 'none'}")
            check(cluster, repo, trial, job)
            trial.shown_s, trial.taken_up_s = list(shown.values()), list(taken_up.values())
            if job is not None and job.gate is not None and job.gate.id not in shown:
                trial.unseen.append(job.gate.id)
                trial.stuck = True  # a gate nobody can see: the maintainer waits forever
            if passed_by:  # a pass ran after the gate was owed and left it: a pass missed it
                trial.late = len(passed_by)
                trial.notes.append(f"{len(passed_by)} gate(s) left unpublished by their step "
                                   f"were passed by a whole reconciler pass (interval "
                                   f"{cluster.reconcile_s:.0f} s) that did not take them up")
            log(trial.line())
            result.trials.append(trial)
        result.reconcile_s = cluster.reconcile_s
        result.notes.append("faults injected: " + (", ".join(
            f"{k} {v}" for k, v in sorted(cluster.gh.faults.items())) or "none"))
    return result


def run_duplicates(trials: int = 1, *, files: int = FILES,
                   stuck_timeout_s: float = STUCK_TIMEOUT_S, base: Path | None = None,
                   cluster: Cluster | None = None, log: Log = quiet) -> ScenarioResult:
    """Every webhook twice at once (one delivery id), every command comment once more under a
    second delivery id; the plan gate is approved by such a comment."""
    result = ScenarioResult("duplicates")
    with using(cluster, base, files) as cluster:
        for index in range(trials):
            repo = cluster.new_repo(f"dups{index + 1:02d}", require_plan_approval=True)
            trial = Trial("duplicates", repo.name)
            approvals: list[int] = []

            def on_gate(job: Job, tries: int, repo: FakeRepo = repo,
                        approvals: list[int] = approvals) -> bool:
                if job.gate is None or job.gate.kind.value != "plan" or tries >= 2:
                    return False
                wait_past_second_of(job.gate.opened_at)
                approvals.append(cluster.comment(repo, "/stepwise approve", copies=2,
                                                 redeliveries=1))
                return True

            started = time.monotonic()
            cluster.label(repo, copies=2)
            job = wait_until_settled(cluster, repo, timeout=stuck_timeout_s, on_gate=on_gate)
            trial.seconds = time.monotonic() - started
            check(cluster, repo, trial, job)
            comments = {c.id: c for c in repo.issues[1].comments}
            reactions = [len(comments[i].reactions) for i in approvals]
            answered_to = Counter(m.group(2) for c in comments.values()
                                  for m in MARKER.finditer(c.body) if "reply" in m.group(2))
            trial.notes.append(f"{len(approvals)} approval comment(s) delivered 4 times each; "
                               f"reactions {reactions}; replies {dict(answered_to) or 0}")
            if any(count > 1 for count in reactions):
                trial.other_duplicates.append(f"reactions {reactions} on one comment")
            log(trial.line())
            result.trials.append(trial)
    return result
