"""Benchmark (issue 44): GitHub's content-creating writes per batch, and the time a long job waits
for the per-installation write budget (80 a minute, 500 an hour: GitHub's secondary limits).

    .venv/bin/python -m bench.api_writes [--batches 12] [--long 300]

Part 1, measured: through the App against the fake GitHub (which enforces the same limits), a
real redis-server and a real `stepwise worker --burst`, one `replace` job of `--batches`
one-line batches validated by `python -c pass`, commits through the Git Data API (GitHub signs
them). Every POST, PATCH, PUT and DELETE the installation sent is counted by route, and divided by
the batches; the writes of starting the job (the plan, the draft PR) are counted apart.

Part 2, computed from part 1's figures with the real budget (bot/github/write_budget.py) on the
same Redis and a simulated clock: a `--long`-batch job whose batches each take the measured
engine time and make the measured writes; printed: the wall time the budget adds (the job's
waits for a slot), against the same job with no budget (which GitHub would refuse past 80 a
minute). Ratios within this run; nothing is asserted.
"""

from __future__ import annotations

import argparse
import itertools
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from collections import Counter
from pathlib import Path

import redis
import yaml

from bench._common import STEPWISE, machine_facts, stepwise_env, stop
from bench.scale_out import MAINTAINER, OWNER, SECRET, TERMINAL, sample_repo
from bot.github.observer import route_template
from bot.github.write_budget import BudgetLimits, WriteBudget, is_content_creating
from bot.plumbing.keys import github_writes_key
from bot.plumbing.redis_store import RedisStore
from bot.settings import Settings
from bot.web.app import create_app
from jobs.kernel.job import Job
from jobs.kernel.model import BatchStatus
from tests.kit.chaos.cluster import served
from tests.kit.chaos.sample import ISSUE_BODY, ISSUE_TITLE
from tests.kit.github import FakeGitHub, RecordedRequest
from tests.kit.redis_server import running_redis
from tests.kit.webhooks import deliver, make_event


def run_job(gh: FakeGitHub, connection: redis.Redis, url: str, env: dict[str, str],
            logs: Path, batches: int, timeout_s: float) -> Job | None:
    tree = sample_repo(batches, 0.0)
    tree[".github/stepwise.yml"] = yaml.safe_dump(
        {"validate": ["python -c pass"], "allow_commands": ["python"], "batch_size": 1,
         "batches_per_milestone": batches + 1, "require_plan_approval": False}, sort_keys=False)
    repo = gh.add_repo(OWNER, "writes", tree)
    gh.add_issue(repo, ISSUE_TITLE, ISSUE_BODY, user=MAINTAINER)
    gh.set_permission(repo, MAINTAINER, "maintain")
    payload = make_event("issues.labeled", repo=repo, issue_number=1, sender=MAINTAINER,
                         label="stepwise")
    store = RedisStore(connection)
    if deliver(url, "issues", payload, secret=SECRET, delivery_id="label").status_code != 202:
        raise RuntimeError("the label delivery was not accepted")
    with (logs / "worker.log").open("wb") as out:
        proc = subprocess.Popen([str(STEPWISE), "worker", "--burst"], env=env, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True, cwd=logs)
    start = time.monotonic()
    try:
        while time.monotonic() < start + timeout_s and proc.poll() is None:
            job = store.find(repo.full_name, 1)
            if job is not None and job.status in TERMINAL:
                break
            time.sleep(0.2)
    finally:
        stop(proc)
    return store.find(repo.full_name, 1)


def engine_seconds(job: Job) -> float:
    """The median time between consecutive batches' ends (the engine's time per batch)."""
    ends = sorted(b.attempts[-1].finished_at for b in job.batches
                  if b.status is BatchStatus.COMPLETED and b.attempts
                  and b.attempts[-1].finished_at is not None)
    spans = [(b - a).total_seconds() for a, b in itertools.pairwise(ends)]
    return statistics.median(spans) if spans else 1.0


class SimClock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def budget_wait(connection: redis.Redis, batches: int, writes: float, step_s: float) -> float:
    """Seconds a `batches`-batch job waits for the budget, each batch `step_s` of work then
    `writes` writes (rounded per batch so the total is right)."""
    connection.delete(*connection.keys(github_writes_key("sim*")) or ["-"])
    clock = SimClock()
    pacer = WriteBudget(connection, BudgetLimits(max_inline_wait_s=float("inf")), clock=clock,
                        sleep=clock.sleep, key=github_writes_key)
    for n in range(batches):
        clock.sleep(step_s)
        due = round(writes * (n + 1)) - round(writes * n)
        for _ in range(due):
            pacer.spend("sim")
    return pacer.waited_s


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.api_writes", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--batches", type=int, default=12, help="batches of the measured job")
    parser.add_argument("--long", type=int, default=300, help="batches of the computed job")
    parser.add_argument("--timeout", type=float, default=900.0)
    options = parser.parse_args()
    batches = min(max(options.batches, 2), 60)
    print(f"api writes: {machine_facts()}; load average {os.getloadavg()[0]:.1f}", flush=True)
    base = Path(tempfile.mkdtemp(prefix="stepwise-bench-writes-"))
    try:
        (base / "logs").mkdir()
        with running_redis() as redis_url, FakeGitHub(root=base / "github",
                                                      git_http=True) as gh:
            connection = redis.Redis.from_url(redis_url)
            values = dict(app_id=gh.app_id, private_key=gh.private_key_pem,
                          webhook_secret=SECRET, redis_url=redis_url,
                          github_api_url=gh.base_url, workdir=base / "work")
            env = stepwise_env(**values)
            settings = Settings(**values)  # type: ignore[arg-type]
            with served(create_app(settings, redis.Redis.from_url(redis_url))) as url:
                job = run_job(gh, connection, url, env, base / "logs", batches, options.timeout)
            writes = [r for r in gh.requests if is_content_creating(r.method, r.path)
                      and not r.path.endswith("/access_tokens")]
            report(job, writes, gh, connection, options.long)
            connection.close()
    finally:
        shutil.rmtree(base, ignore_errors=True)


def report(job: Job | None, writes: list[RecordedRequest], gh: FakeGitHub, connection: redis.Redis,
           long: int) -> None:
    if job is None:
        print("the job was not found: see the worker log")
        return
    done = sum(b.status is BatchStatus.COMPLETED for b in job.batches)
    print(f"job: {job.status.value}, {done} batches committed; GitHub refused "
          f"{gh.rate_limits.refused_writes} writes for the secondary limit")
    by_route = Counter(f"{r.method} {route_template(r.path)}" for r in writes)
    print(f"\ncontent-creating writes: {len(writes)} in all, {len(writes) / max(done, 1):.2f} "
          "a batch (starting and ending the job included)")
    print("| writes | route |\n|---:|---|")
    for route, count in by_route.most_common():
        print(f"| {count} | `{route}` |")
    per_batch = len(writes) / max(done, 1)
    step_s = engine_seconds(job)
    waited = budget_wait(connection, long, per_batch, step_s)
    work = long * step_s
    print(f"\n{long}-batch job at {per_batch:.2f} writes and {step_s:.2f} s of engine time a "
          f"batch: {long * per_batch:.0f} writes; the budget adds {waited / 60:.1f} min of "
          f"waiting to {work / 60:.1f} min of work (x{(work + waited) / work:.2f} the wall time "
          "without a budget, which GitHub refuses past 80 writes a minute and 500 an hour)")


if __name__ == "__main__":
    main()
