"""The kill scenarios: the worker advancing a job (kill, kill-survivor) or handling its label
(kill-label) killed at a random moment or right after a push."""

from __future__ import annotations

import contextlib
import random
import signal
import threading
import time
from pathlib import Path

from jobs.kernel.job import Job
from jobs.kernel.model import BatchStatus, JobStatus
from tests.kit.chaos.cluster import Cluster, label_delivery, open_cluster, using
from tests.kit.chaos.killing import descendants, signal_pids
from tests.kit.chaos.results import ScenarioResult
from tests.kit.chaos.settings import FILES, MAINTAINER, SECRET, STUCK_TIMEOUT_S, TERMINAL, Log, quiet
from tests.kit.chaos.trial import Trial, branch_batches, check
from tests.kit.chaos.watch import Watch, finished_count, wait_until_settled
from tests.kit.chaos.workers import WorkerProc
from tests.kit.github_model import FakeRepo
from tests.kit.webhooks import deliver, make_event


def _ref_path(repo: FakeRepo, branch: str) -> Path:
    return repo.path / "refs" / "heads" / branch


def _read_ref(path: Path) -> str:
    try:
        return path.read_text().strip()
    except OSError:
        return ""


def _allowed(cluster: Cluster, proc: WorkerProc | None, prefer: str | None) -> bool:
    """Whether `proc` may be the victim: `prefer` "scheduler" wants the worker running RQ's
    scheduler, "other" spares it, None takes any."""
    if proc is None or prefer is None:
        return proc is not None
    holds = cluster.scheduler_holder()[1] is proc
    return holds if prefer == "scheduler" else not holds


def _victim(cluster: Cluster, repo: FakeRepo, job_id: str | None, rng: random.Random, *,
            prefer: str | None, wait_s: float) -> tuple[WorkerProc, list[int]]:
    """The worker advancing the job (or handling its label), and its processes, frozen; waits
    up to `wait_s` for one that is busy with it (and allowed by `prefer`), else picks an allowed
    one at random (not frozen). A busy worker is frozen, then asked again: one that finished its
    step in between is let go and waited for again, so "busy" is true at the kill."""
    needles = (job_id or "", label_delivery(repo))
    deadline = time.monotonic() + wait_s
    while True:
        busy = cluster.workers.busy_with(cluster.redis, *needles)
        if _allowed(cluster, busy, prefer):
            assert busy is not None
            tree = [busy.pid, *descendants(busy.pid)]
            signal_pids(tree, signal.SIGSTOP)
            if cluster.workers.busy_with(cluster.redis, *needles) is busy:
                return busy, tree
            signal_pids(tree, signal.SIGCONT)
        if time.monotonic() > deadline:
            break
        time.sleep(0.005)
    alive = cluster.workers.alive()
    return rng.choice([p for p in alive if _allowed(cluster, p, prefer)] or alive), []


def _kill_after_push(cluster: Cluster, repo: FakeRepo, ref: Path, target: int, *,
                     prefer: str | None, timeout: float) -> tuple[WorkerProc | None, list[int]]:
    """Poll the remote branch every 0.5 ms; from the `target`-th push on, freeze the process
    tree of the worker advancing the job the moment the branch moves (a thread keeps track of
    that worker and its processes). Returns the frozen worker (killed by the caller)."""
    current: list[tuple[WorkerProc, list[int]] | None] = [None]
    stop = threading.Event()

    def follow() -> None:
        job_id = ""
        while not stop.wait(0.03):
            if not job_id:
                job = cluster.job(repo)
                job_id = job.id if job else ""
                if not job_id:
                    continue
            busy = cluster.workers.busy_with(cluster.redis, job_id)
            if not _allowed(cluster, busy, prefer):
                busy = None
            with contextlib.suppress(OSError):
                current[0] = (busy, descendants(busy.pid)) if busy is not None else None

    thread = threading.Thread(target=follow, daemon=True, name="chaos-follow")
    thread.start()
    try:
        pushes, last = 0, _read_ref(ref)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            head = _read_ref(ref)
            if head and head != last:
                last, pushes = head, pushes + 1
                seen = current[0]
                if pushes >= target and seen is not None and seen[0].process.poll() is None:
                    signal_pids(seen[1], signal.SIGSTOP)  # at once; the walk comes after
                    return seen
            if pushes and pushes >= target and current[0] is None:
                job = cluster.job(repo)
                if job is not None and job.status in TERMINAL:
                    return None, []
            time.sleep(0.0005)
        return None, []
    finally:
        stop.set()
        thread.join(timeout=5)


def kill_trial(index: int, expected_s: float, rng: random.Random, *, after_push: bool,
               restart: bool = True, prefer: str | None = None, wait_for_job: bool = False,
               slow_steps_s: float = 0.0, files: int = FILES,
               stuck_timeout_s: float = STUCK_TIMEOUT_S, base: Path | None = None,
               cluster: Cluster | None = None, scenario: str = "kill",
               log: Log = quiet) -> Trial:
    """One job on a fresh installation; the worker advancing it is killed once (at a random
    moment, or right after the remote branch moved: between a push and its record write) and
    restarted at once, or (`restart=False`) only after the job settled, so the surviving worker
    must finish it. `prefer` "scheduler" kills only the worker running RQ's scheduler, "other"
    never kills that one, None kills whichever advances the job. `wait_for_job` holds the kill
    until the label became a job record. `slow_steps_s` delays the repository read that opens
    every step, so a kill is sure to land inside a step. Without `cluster` the trial gets a
    fresh installation."""
    with using(cluster, base, files) as cluster:
        repo = cluster.new_repo(f"{scenario}{index:02d}")
        trial = Trial(scenario, repo.name)
        ref = _ref_path(repo, "stepwise/issue-1")
        if slow_steps_s:
            cluster.gh.slow("GET", rf"/repos/{repo.full_name}$", slow_steps_s, times=1000)
        victim: WorkerProc | None = None
        frozen_first: list[int] = []
        job_id: str | None = None
        job: Job | None = None
        with Watch(cluster, repo) as watch:
            started = time.monotonic()
            cluster.label(repo)
            if after_push:
                target = rng.randint(1, files)
                trial.notes.append(f"kill right after push {target}")
                victim, frozen_first = _kill_after_push(cluster, repo, ref, target,
                                                        prefer=prefer, timeout=stuck_timeout_s)
                job = cluster.job(repo)
                job_id = job.id if job else None
            else:
                delay = rng.uniform(0.0, expected_s * (0.3 if prefer == "scheduler" else 1.0))
                trial.notes.append(f"kill at {delay:.1f}s")
                time.sleep(max(0.0, started + delay - time.monotonic()))
                job = cluster.job(repo)
                while wait_for_job and job is None and time.monotonic() - started < 30:
                    time.sleep(0.01)
                    job = cluster.job(repo)
                job_id = job.id if job else None
                if job is not None and job.status in TERMINAL:
                    trial.notes.append("the job had already ended")
                else:
                    victim, frozen_first = _victim(cluster, repo, job_id, rng, prefer=prefer,
                                                   wait_s=30.0 if prefer else 2.0)
            if victim is not None:
                held = cluster.scheduler_holder()[1] is victim
                what = cluster.workers.busy_with(cluster.redis, job_id or "-",
                                                 label_delivery(repo)) is victim
                cluster.workers.kill(victim, first=frozen_first)
                killed_at = time.monotonic()
                job = cluster.job(repo)
                before = finished_count(job) if job else 0
                state = f"job {job.status}, {before} done" if job else "no job record yet"
                trial.notes.append(f"killed {'busy' if what else 'idle'} worker {victim.number} "
                                   f"({state}{'; it ran the RQ scheduler' if held else ''})")
                if job is not None:
                    on_branch = set(branch_batches(repo, job.branch, job.id))
                    recorded = {b.number for b in job.batches
                                if b.status is BatchStatus.COMPLETED}
                    if on_branch - recorded:
                        trial.notes.append(
                            f"pushed, not recorded: batch {sorted(on_branch - recorded)}")
                active = job is None or (job.status not in TERMINAL
                                         and job.status is not JobStatus.AWAITING_HUMAN)
                if restart:
                    cluster.ensure_workers()
                job = wait_until_settled(cluster, repo, timeout=stuck_timeout_s)
                recovered = watch.progress_after(killed_at, before)
                if recovered is not None and active:
                    trial.recover_s.append(recovered)
            else:
                job = wait_until_settled(cluster, repo, timeout=stuck_timeout_s)
            trial.seconds = time.monotonic() - started
        check(cluster, repo, trial, job)
    log(trial.line())
    return trial


def run_kill(trials: int, *, expected_s: float, seed: int = 1, files: int = FILES,
             stuck_timeout_s: float = STUCK_TIMEOUT_S, base: Path | None = None,
             cluster: Cluster | None = None, log: Log = quiet) -> ScenarioResult:
    """`trials` jobs, each with one worker killed and restarted at once; every third kill comes
    right after a push. Each trial gets a fresh installation unless `cluster` is given."""
    rng = random.Random(seed)
    result = ScenarioResult("kill")
    for index in range(trials):
        result.trials.append(kill_trial(
            index + 1, expected_s, rng, after_push=index % 3 == 2, files=files,
            stuck_timeout_s=stuck_timeout_s, base=base, cluster=cluster, log=log))
    _kill_notes(result)
    return result


def run_kill_survivor(trials: int, *, expected_s: float, seed: int = 4, files: int = FILES,
                      stuck_timeout_s: float = STUCK_TIMEOUT_S, base: Path | None = None,
                      log: Log = quiet) -> ScenarioResult:
    """The worker advancing the job is killed and not restarted: the surviving worker must
    finish the job. Odd trials kill the worker running RQ's scheduler, even ones the other."""
    rng = random.Random(seed)
    result = ScenarioResult("kill-survivor")
    for index in range(trials):
        result.trials.append(kill_trial(
            index + 1, expected_s, rng, after_push=False, restart=False,
            prefer="scheduler" if index % 2 == 0 else "other", wait_for_job=True, files=files,
            stuck_timeout_s=stuck_timeout_s, base=base, scenario="survivor", log=log))
    _kill_notes(result)
    return result


def run_kill_label(trials: int = 2, *, files: int = FILES,
                   stuck_timeout_s: float = STUCK_TIMEOUT_S, redeliver_after_s: float = 10.0,
                   base: Path | None = None, log: Log = quiet) -> ScenarioResult:
    """The worker handling the `labeled` webhook is killed mid-event and restarted at once.
    Odd trials kill it while it waits for a GitHub call (the fake answers the issue read 3 s
    late, so the moment is certain); even ones the moment it starts the repository's first
    clone (the mirror directory appearing, polled every 0.5 ms). When no job appeared
    `redeliver_after_s` later, the maintainer redelivers the webhook from the App's delivery
    log (same delivery id)."""
    result = ScenarioResult("kill-label")
    for index in range(trials):
        with open_cluster(base, files=files) as cluster:
            repo = cluster.new_repo(f"label{index + 1:02d}")
            trial = Trial(result.name, repo.name)
            during_clone = index % 2 == 1
            mirror = cluster.root / "work" / "repos" / repo.owner / f"{repo.name}.git"
            if not during_clone:
                cluster.gh.slow("GET", rf"/repos/{repo.full_name}/issues/1$", 3.0)
            started = time.monotonic()
            cluster.label(repo)
            victim = None
            while victim is None and time.monotonic() - started < 10:
                victim = cluster.workers.busy_with(cluster.redis, label_delivery(repo))
                time.sleep(0.002)
            tree = descendants(victim.pid) if victim is not None else []
            deadline = time.monotonic() + 10
            while victim is not None and time.monotonic() < deadline:
                if during_clone and any(mirror.parent.glob(f"{mirror.name}*")):
                    break  # the clone's directory (or its `.partial-<pid>` beside) appeared
                if not during_clone and cluster.gh.slowed:
                    time.sleep(0.5)  # inside the late answer
                    break
                time.sleep(0.0005)
            if victim is not None:
                cluster.workers.kill(victim, first=tree)
                made = sorted(mirror.parent.glob(f"{mirror.name}*")) if during_clone else []
                left = {d.name: sorted(p.name for p in d.iterdir()) for d in made if d.is_dir()}
                trial.notes.append(
                    f"killed worker {victim.number} "
                    + (f"as the first clone began (it left {left})" if during_clone
                       else "while it waited for GitHub")
                    + ("; a job record exists" if cluster.job(repo) else "; no job yet"))
                cluster.ensure_workers()
            job = wait_until_settled(cluster, repo, timeout=redeliver_after_s)
            if job is None:
                payload = make_event("issues.labeled", repo=repo, issue_number=1,
                                     sender=MAINTAINER, label="stepwise")
                answer = deliver(cluster.web_url, "issues", payload, secret=SECRET,
                                 delivery_id=label_delivery(repo))
                trial.notes.append(f"redelivered: {answer.status_code} {answer.text[:60]}")
            # A job that exists but is still working gets the rest of the time budget.
            job = wait_until_settled(cluster, repo, timeout=max(
                1.0, stuck_timeout_s - (time.monotonic() - started)))
            trial.seconds = time.monotonic() - started
            check(cluster, repo, trial, job)
            if job is None:
                errors = [line for proc in cluster.workers.procs for line in
                          proc.log.read_text(errors="replace").splitlines() if "Error:" in line]
                if errors:
                    trial.notes.append(f"last worker error: {errors[-1][-220:]}")
        log(trial.line())
        result.trials.append(trial)
    return result


def _kill_notes(result: ScenarioResult) -> None:
    window = sum(any(n.startswith("pushed, not recorded") for n in t.notes)
                 for t in result.trials)
    holders = [t for t in result.trials if any("ran the RQ scheduler" in n for n in t.notes)]
    result.notes.append(f"{window} kill(s) landed between a push and its record write")
    result.notes.append(f"{len(holders)} kill(s) hit the worker running RQ's scheduler; "
                        f"{sum(t.stuck for t in holders)} of those jobs got stuck, "
                        f"{sum(t.stuck for t in result.trials if t not in holders)} others")
