"""Benchmark 5 (issue 6): scale-out, the same jobs processed by 1 and by 2 workers.

    .venv/bin/python -m bench.scale_out [--jobs 8] [--batches 4] [--sleep 0.5]

Everything runs on 127.0.0.1: a real redis-server on a free port, the loopback FakeGitHub of
tests/kit (in this process), the web app (bot.web.app.create_app) served by uvicorn in a thread of
this process, and real `stepwise worker --burst` subprocesses (RQ workers with the scheduler,
each the leader of its own session, stopped by pid).

Each phase (1 worker, then 2) gets M fresh repositories, one job each (the repository slot
allows one running job per repository, so M jobs on M repositories may all run at once): a
`replace` job over `--batches` files, `batch_size: 1`, one milestone,
`require_plan_approval: false`, validated by `python -c "import time; time.sleep(0.5)"` in the
sandbox. The clock starts when the M signed `issues.labeled` deliveries are posted to the
served app (no worker running yet), the workers start right after, and the clock stops when
every job's record says `completed`; each phase is bounded (--timeout) and stops by itself.

GitHub's content-creation limit is raised in the fake and in the App's write budget
(bench._common.lift_write_limits): at 80 writes a minute the installation, not the workers, set
the pace (8 jobs of 3 batches write about 200 times).

Prints per phase: wall time, jobs/min, batches/s, the RQ tasks run, the validation time inside
(the sleeps), the machine-wide CPU busy share, and the throughput ratio 2 workers / 1 worker
against the target (>= 1.8). Exit status 0: it is a measurement.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import redis
import yaml
from rq.registry import FailedJobRegistry, FinishedJobRegistry, ScheduledJobRegistry

from bench._common import STEPWISE, lift_write_limits, machine_facts, stepwise_env, stop
from bot.observability.metrics import VALIDATION_SECONDS
from bot.plumbing.queue import queue
from bot.plumbing.redis_store import RedisStore
from bot.settings import Settings
from bot.web.app import create_app
from jobs.kernel.model import BatchStatus, JobStatus
from tests.kit.chaos.cluster import served  # the app served as the chaos run serves it
from tests.kit.chaos.sample import ISSUE_BODY, ISSUE_TITLE, LEGACY  # the same sample repository
from tests.kit.github import FakeGitHub
from tests.kit.github_model import FakeRepo
from tests.kit.redis_server import running_redis
from tests.kit.webhooks import deliver, make_event

OWNER = "octo-org"
MAINTAINER = "maria"
SECRET = "bench-scale-s3cret"
TARGET_RATIO = 1.8
TERMINAL = frozenset({JobStatus.COMPLETED, JobStatus.CANCELLED, JobStatus.FAILED})
POLL_S = 0.2  # how often the job records are read (the wall time's resolution)


def sample_repo(batches: int, sleep_s: float) -> dict[str, str | bytes]:
    """`batches` modules each calling legacy.old_total() once; validation only sleeps."""
    config = {"validate": [f'python -c "import time; time.sleep({sleep_s})"'],
              "allow_commands": ["python"], "batch_size": 1,
              "batches_per_milestone": batches + 1, "require_plan_approval": False,
              "ci": {"wait": "off"}}  # the sample has no CI (with it on, the grace would dominate)
    files: dict[str, str | bytes] = {
        "README.md": "# app\n",
        ".github/stepwise.yml": yaml.safe_dump(config, sort_keys=False),
        "app/__init__.py": "",
        "app/legacy.py": LEGACY,
    }
    for number in range(1, batches + 1):
        files[f"app/part{number:02d}.py"] = (
            f'"""Part {number}."""\n\nfrom app import legacy\n\n\n'
            f"def value():\n    return legacy.old_total({number}, 1)\n")
    return files


def cpu_busy() -> tuple[int, int]:
    """(busy, total) jiffies of the whole machine, from /proc/stat."""
    values = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = values[3] + values[4]  # idle + iowait
    return sum(values) - idle, sum(values)


@dataclass
class Phase:
    workers: int
    jobs: int
    wall_s: float = float("nan")
    first_start_s: float = float("nan")  # labels posted -> the first RQ task started
    batches: int = 0
    tasks: int = 0
    failed_tasks: int = 0
    scheduled_tasks: int = 0  # re-queued for later (rate-limit waits) and never run by --burst
    refused_writes: int = 0  # writes the fake GitHub refused for its secondary limit
    validation_s: float = 0.0
    validations: int = 0
    api_requests: int = 0  # requests the fake GitHub answered during the phase
    bench_cpu_s: float = 0.0  # this process: the fake GitHub, the web app, the polling
    cpu_busy: float = float("nan")
    statuses: dict[str, int] = field(default_factory=dict)
    worker_exits: list[float] = field(default_factory=list)  # seconds after start
    completed: bool = False

    @property
    def jobs_per_min(self) -> float:
        return self.jobs / self.wall_s * 60 if self.completed else float("nan")

    @property
    def batches_per_s(self) -> float:
        return self.batches / self.wall_s if self.completed else float("nan")


def run_phase(gh: FakeGitHub, connection: redis.Redis, url: str, env: dict[str, str],
              logs: Path, *, workers: int, jobs: int, batches: int, sleep_s: float,
              timeout_s: float) -> Phase:
    connection.flushdb()
    phase = Phase(workers, jobs)
    repos: list[FakeRepo] = []
    for index in range(jobs):
        repo = gh.add_repo(OWNER, f"scale-w{workers}-{index:02d}", sample_repo(batches, sleep_s))
        gh.add_issue(repo, ISSUE_TITLE, ISSUE_BODY, user=MAINTAINER)
        gh.set_permission(repo, MAINTAINER, "maintain")
        repos.append(repo)
    payloads = [make_event("issues.labeled", repo=repo, issue_number=1, sender=MAINTAINER,
                           label="stepwise") for repo in repos]
    store = RedisStore(connection)
    q = queue(connection)
    api_before, refused_before = len(gh.requests), gh.rate_limits.refused_writes
    busy0 = cpu_busy()
    start = time.monotonic()
    for repo, payload in zip(repos, payloads, strict=True):
        response = deliver(url, "issues", payload, secret=SECRET,
                           delivery_id=f"label-{repo.name}")
        if response.status_code != 202:
            raise RuntimeError(f"label delivery answered {response.status_code}")
    procs = []
    for number in range(workers):
        out = (logs / f"worker-{workers}-{number}.log").open("wb")
        procs.append(subprocess.Popen([str(STEPWISE), "worker", "--burst"], env=env, stdout=out,
                                      stderr=subprocess.STDOUT, start_new_session=True,
                                      cwd=logs))
        out.close()
    deadline = start + timeout_s
    finished: dict[str, JobStatus] = {}
    own_cpu = time.process_time()
    try:
        while time.monotonic() < deadline:
            now = time.monotonic()
            if phase.first_start_s != phase.first_start_s and q.count < jobs:
                phase.first_start_s = now - start
            for proc in procs:
                if proc.poll() is not None and len(phase.worker_exits) < len(procs) and \
                        getattr(proc, "_bench_exit", None) is None:
                    proc._bench_exit = now - start  # type: ignore[attr-defined]
                    phase.worker_exits.append(round(now - start, 1))
            for repo in [r for r in repos if r.full_name not in finished]:
                job = store.find(repo.full_name, 1)  # only jobs still running: cheap polling
                if job is not None and job.status in TERMINAL:
                    finished[repo.full_name] = job.status
            if len(finished) == len(repos):
                phase.wall_s = time.monotonic() - start
                phase.completed = all(s is JobStatus.COMPLETED for s in finished.values())
                break
            if all(proc.poll() is not None for proc in procs):
                break  # every burst worker is gone and jobs remain: report, do not hang
            time.sleep(POLL_S)
    finally:
        busy1 = cpu_busy()
        phase.bench_cpu_s = time.process_time() - own_cpu
        for proc in procs:
            stop(proc)
    phase.cpu_busy = (busy1[0] - busy0[0]) / max(busy1[1] - busy0[1], 1)
    phase.api_requests = len(gh.requests) - api_before
    phase.refused_writes = gh.rate_limits.refused_writes - refused_before
    for repo in repos:
        job = store.find(repo.full_name, 1)
        status = job.status.value if job is not None else "missing"
        phase.statuses[status] = phase.statuses.get(status, 0) + 1
        if job is None:
            continue
        phase.batches += sum(b.status is BatchStatus.COMPLETED for b in job.batches)
    phase.tasks = FinishedJobRegistry(queue=q).count
    phase.failed_tasks = FailedJobRegistry(queue=q).count
    phase.scheduled_tasks = ScheduledJobRegistry(queue=q).count  # type: ignore[no-untyped-call]
    phase.validation_s, phase.validations = validation_seconds(connection)
    return phase


def validation_seconds(connection: redis.Redis) -> tuple[float, int]:
    """Total time the validation commands ran and how many runs, from the workers' metrics."""
    total, runs = 0.0, 0
    for name, value in connection.hgetall(VALIDATION_SECONDS.key).items():
        field_name = name.decode(errors="replace") if isinstance(name, bytes) else str(name)
        if field_name.endswith("\x1fsum"):
            total += float(value)
        elif field_name.endswith("\x1fcount"):
            runs += int(value)
    return total, runs


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.scale_out", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=8, help="jobs (= repositories) per phase")
    parser.add_argument("--batches", type=int, default=3, help="batches per job")
    parser.add_argument("--sleep", type=float, default=0.5, help="validation sleep, seconds")
    parser.add_argument("--timeout", type=float, default=150.0, help="bound per phase, seconds")
    options = parser.parse_args()
    jobs = min(max(options.jobs, 1), 64)
    batches = min(max(options.batches, 1), 50)
    sleep_s = min(max(options.sleep, 0.0), 10.0)
    timeout_s = min(max(options.timeout, 10.0), 600.0)
    print(f"scale-out: {machine_facts()}", flush=True)
    print(f"{jobs} jobs per phase, one repository each, {batches} batches of 1 file, validation "
          f"sleeps {sleep_s:g} s; `stepwise worker --burst` processes", flush=True)
    base = Path(tempfile.mkdtemp(prefix="stepwise-bench-scale-"))
    try:
        phases = run_all(base, jobs, batches, sleep_s, timeout_s)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    report(phases)


def run_all(base: Path, jobs: int, batches: int, sleep_s: float, timeout_s: float
            ) -> list[Phase]:
    logs = base / "logs"
    logs.mkdir(parents=True)
    phases = []
    with running_redis() as redis_url, FakeGitHub(root=base / "github") as gh:
        connection = redis.Redis.from_url(redis_url)
        limits = lift_write_limits(gh)
        env = stepwise_env(app_id=gh.app_id, private_key=gh.private_key_pem,
                           webhook_secret=SECRET, redis_url=redis_url,
                           github_api_url=gh.base_url, workdir=base / "work", **limits)
        settings = Settings(app_id=gh.app_id, private_key=gh.private_key_pem,
                            webhook_secret=SECRET, redis_url=redis_url,
                            github_api_url=gh.base_url, workdir=base / "work")
        with served(create_app(settings, redis.Redis.from_url(redis_url))) as url:
            for workers in (1, 2):
                phase = run_phase(gh, connection, url, env, logs, workers=workers, jobs=jobs,
                                  batches=batches, sleep_s=sleep_s, timeout_s=timeout_s)
                phases.append(phase)
                print(f"  {workers} worker(s): {phase.wall_s:.1f} s, {phase.statuses}",
                      flush=True)
        connection.close()
    return phases


def report(phases: list[Phase]) -> None:
    print()
    print(f"{'workers':>7} {'jobs':>4} {'wall s':>7} {'jobs/min':>8} {'batches/s':>9} "
          f"{'tasks':>5} {'valid. s':>8} {'1st task s':>10} {'cpu busy':>8} {'fake gh cpu s':>13}"
          "  statuses")
    for p in phases:
        print(f"{p.workers:>7} {p.jobs:>4} {p.wall_s:>7.1f} {p.jobs_per_min:>8.1f} "
              f"{p.batches_per_s:>9.2f} {p.tasks:>5} {p.validation_s:>8.1f} "
              f"{p.first_start_s:>10.1f} {p.cpu_busy:>8.0%} {p.bench_cpu_s:>13.1f}  {p.statuses}"
              + (f" failed tasks {p.failed_tasks}" if p.failed_tasks else "")
              + (f"; {p.scheduled_tasks} tasks scheduled for later" if p.scheduled_tasks else "")
              + (f"; {p.refused_writes} writes refused by GitHub's limit"
                 if p.refused_writes else "")
              + (f"; a worker exited early, at {p.worker_exits} s" if p.worker_exits else ""))
    one, two = phases[0], phases[1]
    for p in phases:
        if p.completed and p.tasks:
            other = p.wall_s * p.workers - p.validation_s
            print(f"{p.workers} worker(s): {p.validations} validation runs, "
                  f"{p.validation_s / max(p.validations, 1):.2f} s each; the rest of the "
                  f"workers' time is {other / p.tasks:.2f} s per RQ task (Stepwise, RQ, git, "
                  f"the fake GitHub, or idle); {p.api_requests / p.tasks:.1f} GitHub API requests "
                  "per task")
    if one.completed and two.completed:
        ratio = two.batches_per_s / one.batches_per_s
        print(f"throughput ratio 2 workers / 1 worker = {ratio:.2f} (target >= {TARGET_RATIO}):"
              f" {'met' if ratio >= TARGET_RATIO else 'MISSED'}")
    else:
        print("throughput ratio: not measured (a phase did not complete; see statuses)")


if __name__ == "__main__":
    main()
