"""Benchmark 10 (issue 19): fair sharing of workers between installations, and the limits.

    .venv/bin/python -m bench.fair_share [--jobs 200] [--repos 50] [--installations 10]
                                         [--workers 4] [--sleep 0.2] [--per-installation 0]

A real redis-server, the fake GitHub, the web app in this process and real
`stepwise worker --burst` processes (bench/scale_out.py's pieces). `--repos` repositories
spread over `--installations` installations, `--jobs` issues spread over the repositories
(a `replace` job of one batch each, validated by a sleep). Every label is delivered at once,
installation by installation (the order that would starve the later installations if the
queue served them first). Run with `--workers` workers, then with one for the throughput ratio.

Figures: each installation's mean time from its labels to its jobs' completion against the
mean over all installations (fair share: the installations are the same size; target
<= 2x), the most jobs of one repository and of one installation whose attempts overlapped
(the per-repository and per-installation limits, from the attempts' recorded spans), and the
throughput ratio N workers / 1 worker (target >= 3.5; on a machine with fewer cores than
workers it is bounded by the cores: every step costs CPU besides the sleep). Where each job's
CPU goes (bench/cpu_account.py: the worker processes, what they waited for, this process's web
app and fake GitHub, redis-server) and the ceiling that sets on this machine's cores:
min(workers, cores x one worker's seconds a job / CPU seconds a job). `--worker-class` is
passed to `stepwise worker`; the workers find the real interpreter first on PATH.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import redis
import yaml

from bench._common import STEPWISE, lift_write_limits, machine_facts, stepwise_env, stop
from bench.cpu_account import Cpu, Meter, ceiling
from bench.scale_out import MAINTAINER, SECRET, TERMINAL, cpu_busy, sample_repo
from bot.plumbing.redis_store import RedisStore
from bot.settings import Settings
from bot.web.app import create_app
from jobs.kernel.model import JobStatus
from tests.kit.chaos.cluster import served
from tests.kit.chaos.sample import ISSUE_BODY, ISSUE_TITLE
from tests.kit.github import FakeGitHub
from tests.kit.github_model import FakeRepo
from tests.kit.redis_server import running_redis
from tests.kit.webhooks import deliver, make_event

TARGET_SHARE, TARGET_RATIO = 2.0, 3.5


@dataclass
class Phase:
    workers: int
    wall_s: float = float("nan")
    done: dict[int, list[float]] = field(default_factory=dict)  # installation -> seconds
    statuses: dict[str, int] = field(default_factory=dict)
    spans: list[tuple[str, int, datetime, datetime]] = field(default_factory=list)
    cpu_busy: float = float("nan")
    cpu: Cpu = field(default_factory=Cpu)
    unfinished: dict[str, int] = field(default_factory=dict)  # why a job did not finish

    @property
    def completed(self) -> int:
        return self.statuses.get(JobStatus.COMPLETED.value, 0)


def peak_overlap(spans: list[tuple[datetime, datetime]]) -> int:
    edges = sorted([(s, 1) for s, _ in spans] + [(e, -1) for _, e in spans])
    peak = running = 0
    for _, step in edges:
        running += step
        peak = max(peak, running)
    return peak


def run_phase(gh: FakeGitHub, connection: redis.Redis, url: str, env: dict[str, str],
              logs: Path, options: argparse.Namespace, workers: int) -> Phase:
    connection.flushdb()
    phase = Phase(workers)
    tree = sample_repo(1, options.sleep)
    config = yaml.safe_load(str(tree[".github/stepwise.yml"]))
    tree[".github/stepwise.yml"] = yaml.safe_dump(config, sort_keys=False)
    repos: list[tuple[FakeRepo, int]] = []
    for number in range(options.repos):
        installation = 5000 + number % options.installations
        repo = gh.add_repo(f"inst{installation}-w{workers}", f"repo{number:03d}", tree,
                           installation_id=installation)
        gh.set_permission(repo, MAINTAINER, "maintain")
        repos.append((repo, installation))
    issues: list[tuple[FakeRepo, int, int]] = []
    for index in range(options.jobs):
        repo, installation = repos[index % len(repos)]
        issues.append((repo, gh.add_issue(repo, ISSUE_TITLE, ISSUE_BODY, user=MAINTAINER),
                       installation))
    issues.sort(key=lambda item: item[2])  # installation by installation
    store = RedisStore(connection)
    busy0 = cpu_busy()
    meter = Meter(connection)
    start = time.monotonic()
    for repo, number, installation in issues:
        payload = make_event("issues.labeled", repo=repo, issue_number=number,
                             sender=MAINTAINER, label="stepwise", installation_id=installation)
        if deliver(url, "issues", payload, secret=SECRET,
                   delivery_id=f"label-{repo.name}-{number}-{workers}").status_code != 202:
            raise RuntimeError("a label delivery was refused")
    procs = []
    for n in range(workers):
        with (logs / f"worker-{workers}-{n}.log").open("wb") as out:
            procs.append(subprocess.Popen([str(STEPWISE), "worker", "--burst",
                                           *(["--worker-class", options.worker_class]
                                             if options.worker_class else [])], env=env,
                                          stdout=out, stderr=subprocess.STDOUT,
                                          start_new_session=True, cwd=logs))
    pending = {(repo.full_name, number): installation for repo, number, installation in issues}
    try:
        while pending and time.monotonic() < start + options.timeout:
            for key, installation in list(pending.items()):
                job = store.find(*key)
                if job is not None and job.status in TERMINAL:
                    phase.done.setdefault(installation, []).append(time.monotonic() - start)
                    del pending[key]
            if all(p.poll() is not None for p in procs):
                break
            time.sleep(0.5)
        phase.wall_s = time.monotonic() - start
    finally:
        busy1 = cpu_busy()
        meter.workers_stopping([p.pid for p in procs if p.poll() is None])
        for proc in procs:
            stop(proc)
        phase.cpu = meter.finish()
    phase.cpu_busy = (busy1[0] - busy0[0]) / max(busy1[1] - busy0[1], 1)
    for repo, number, installation in issues:
        job = store.find(repo.full_name, number)
        status = job.status.value if job is not None else "missing"
        phase.statuses[status] = phase.statuses.get(status, 0) + 1
        if job is not None and job.status not in TERMINAL:
            why = f"{job.gate.kind}: {job.gate.reason[:80]}" if job.gate else (
                job.error.message[:80] if job.error else "no gate")
            phase.unfinished[why] = phase.unfinished.get(why, 0) + 1
        for batch in job.batches if job is not None else []:
            for attempt in batch.attempts:
                if attempt.finished_at is not None:
                    phase.spans.append((repo.full_name, installation, attempt.started_at,
                                        attempt.finished_at))
    return phase


def report(phases: list[Phase], options: argparse.Namespace) -> None:
    print()
    cores = len(os.sched_getaffinity(0))
    for p in phases:
        jobs = max(p.completed, 1)
        print(f"{p.workers} worker(s): {p.wall_s:.1f} s, {p.statuses}, machine busy "
              f"{p.cpu_busy:.0%}; ours {p.cpu.total / (p.wall_s * cores):.0%} of {cores} cores; "
              f"CPU per job {p.cpu.total / jobs:.2f} s (worker processes "
              f"{p.cpu.worker_own / jobs:.2f}, their children {p.cpu.worker_children / jobs:.2f}"
              f", web app + fake GitHub {p.cpu.this_process / jobs:.2f}, redis "
              f"{p.cpu.redis / jobs:.2f})")
        for why, count in sorted(p.unfinished.items(), key=lambda item: -item[1])[:5]:
            print(f"  not finished: {count} x {why}")
    main = phases[0]
    means = {inst: statistics.mean(times) for inst, times in main.done.items()}
    if means:
        overall = statistics.mean(means.values())
        worst = max(means, key=lambda inst: means[inst])
        share = means[worst] / overall
        print(f"mean time to completion per installation: {min(means.values()):.1f}-"
              f"{max(means.values()):.1f} s (all {overall:.1f} s); worst installation "
              f"{share:.2f}x its fair share (target <= {TARGET_SHARE:g}): "
              f"{'met' if share <= TARGET_SHARE else 'MISSED'}")
    by_repo: dict[str, list[tuple[datetime, datetime]]] = {}
    by_inst: dict[int, list[tuple[datetime, datetime]]] = {}
    for repo, inst, begin, end in main.spans:
        by_repo.setdefault(repo, []).append((begin, end))
        by_inst.setdefault(inst, []).append((begin, end))
    repo_peak = max((peak_overlap(v) for v in by_repo.values()), default=0)
    inst_peak = max((peak_overlap(v) for v in by_inst.values()), default=0)
    inst_limit = options.per_installation or "none"
    print(f"most attempts overlapping: {repo_peak} in one repository (limit 1), {inst_peak} in "
          f"one installation (limit {inst_limit})")
    if len(phases) > 1 and phases[1].completed and main.completed:
        ratio = (main.completed / main.wall_s) / (phases[1].completed / phases[1].wall_s)
        one = phases[1]
        per_job = one.wall_s / one.completed
        cpu = statistics.mean([p.cpu.total / p.completed for p in (main, one)])
        best = ceiling(main.workers, cores, per_job, cpu)
        print(f"ceiling on {cores} cores: 1 worker takes {per_job:.2f} s a job, a job costs "
              f"{cpu:.2f} CPU s, so {main.workers} workers reach at most min({main.workers}, "
              f"{cores} x {per_job:.2f} / {cpu:.2f}) = {best:.2f}x")
        got = main.cpu.total / main.wall_s  # the cores this run's processes actually had
        print(f"the cores this run got with {main.workers} workers: {got:.2f} (others used the "
              f"rest), so at most min({main.workers}, {got:.2f} x {per_job:.2f} / {cpu:.2f}) = "
              f"{ceiling(main.workers, 1, per_job * got, cpu):.2f}x")
        print(f"throughput {main.workers} workers / 1 worker = {ratio:.2f} (target >= "
              f"{TARGET_RATIO}): {'met' if ratio >= TARGET_RATIO else 'MISSED'}; "
              f"{ratio / best:.0%} of the ceiling")


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.fair_share", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=200)
    parser.add_argument("--repos", type=int, default=50)
    parser.add_argument("--installations", type=int, default=10)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--sleep", type=float, default=0.2, help="validation sleep, seconds")
    parser.add_argument("--per-installation", type=int, default=0,
                        help="STEPWISE_MAX_RUNNING_PER_INSTALLATION (0: none)")
    parser.add_argument("--timeout", type=float, default=1800.0, help="bound per phase")
    parser.add_argument("--no-baseline", action="store_true", help="skip the 1-worker phase")
    parser.add_argument("--worker-class", default="",
                        help="`stepwise worker --worker-class` (default: the worker's default)")
    options = parser.parse_args()
    options.repos = max(1, min(options.repos, options.jobs))
    options.installations = max(1, min(options.installations, options.repos))
    print(f"fair share: {machine_facts()}; {options.jobs} jobs, {options.repos} repositories, "
          f"{options.installations} installations, {options.workers} workers", flush=True)
    base = Path(tempfile.mkdtemp(prefix="stepwise-bench-fair-"))
    try:
        (base / "logs").mkdir()
        with running_redis() as redis_url, FakeGitHub(root=base / "github") as gh:
            connection = redis.Redis.from_url(redis_url)
            values = dict(app_id=gh.app_id, private_key=gh.private_key_pem,
                          webhook_secret=SECRET, redis_url=redis_url,
                          github_api_url=gh.base_url, workdir=base / "work",
                          max_running_per_installation=options.per_installation,
                          **lift_write_limits(gh))
            env = stepwise_env(**values)
            # The validation's `python` is the real interpreter, not a version manager's shim
            # (a pyenv shim is a bash script costing about 0.2 s of CPU a run).
            env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env["PATH"]])
            settings = Settings(**values)
            phases = []
            with served(create_app(settings, redis.Redis.from_url(redis_url))) as url:
                for workers in [options.workers] + ([] if options.no_baseline else [1]):
                    phases.append(run_phase(gh, connection, url, env, base / "logs", options,
                                            workers))
                    print(f"  {workers} worker(s) done in {phases[-1].wall_s:.1f} s", flush=True)
            connection.close()
    finally:
        shutil.rmtree(base, ignore_errors=True)
    report(phases, options)


if __name__ == "__main__":
    main()
