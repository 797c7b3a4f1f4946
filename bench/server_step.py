"""Benchmark 8 (issue 19): the cost of one step in server mode against the repository's size.

    .venv/bin/python -m bench.server_step [--sizes 1000,20000,100000] [--batches 6]

Through the App against the fake GitHub, with a real redis-server and a real
`stepwise worker --burst` (the same pieces as bench/scale_out.py): for each size, one
repository of that many tracked files (generated with `git fast-import`, never committed
here), one `replace` job of `--batches` one-line batches, validated by `python -c pass`.

The figure is the engine's own time per batch: the span between one batch's end and the
next one's (the whole RQ task: loading the record, the mirror's fetch, the worktree's reset,
the edit, staging and guard, the commit and push, the card on GitHub) minus the validation
command's own duration, median over the batches after the first (the first checks the
worktree out). Printed as a ratio against the smallest size in the same run (target: the
largest within 1.5x).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import redis
import yaml

from bench._common import STEPWISE, lift_write_limits, machine_facts, stepwise_env, stop
from bench.big_repo import grow_branch
from bench.scale_out import MAINTAINER, OWNER, SECRET, TERMINAL, cpu_busy, sample_repo
from bot.plumbing.redis_store import RedisStore
from bot.settings import Settings
from bot.web.app import create_app
from jobs.kernel.job import Job
from jobs.kernel.model import BatchStatus, JobStatus
from tests.kit.chaos.cluster import served
from tests.kit.chaos.sample import ISSUE_BODY, ISSUE_TITLE
from tests.kit.github import FakeGitHub
from tests.kit.redis_server import running_redis
from tests.kit.webhooks import deliver, make_event

TARGET_RATIO = 1.5


@dataclass
class Size:
    files: int
    status: str = "missing"
    wall_s: float = float("nan")
    first_s: float = float("nan")  # the first batch's step (a fresh worktree)
    steps: list[float] = field(default_factory=list)  # later batches, validation excluded
    attempts: list[float] = field(default_factory=list)  # the attempt alone, validation excluded
    validation_s: float = 0.0
    cpu_busy: float = float("nan")

    @property
    def per_batch(self) -> float:
        return statistics.median(self.steps) if self.steps else float("nan")


def batch_spans(job: Job, size: Size) -> None:
    """The engine's time per committed batch, from the record: consecutive attempt ends."""
    done = [b for b in job.batches if b.status is BatchStatus.COMPLETED and b.attempts]
    previous = None
    for batch in sorted(done, key=lambda b: b.number):
        attempt = batch.attempts[-1]
        if attempt.finished_at is None:
            continue
        validation = sum(c.duration_s for c in attempt.commands)
        size.validation_s += validation
        size.attempts.append((attempt.finished_at - attempt.started_at).total_seconds()
                             - validation)
        if previous is None:
            size.first_s = size.attempts[-1]
        else:
            size.steps.append((attempt.finished_at - previous).total_seconds() - validation)
        previous = attempt.finished_at


def run_size(gh: FakeGitHub, connection: redis.Redis, url: str, env: dict[str, str],
             logs: Path, files: int, batches: int, timeout_s: float) -> Size:
    connection.flushdb()
    size = Size(files)
    tree = sample_repo(batches, 0.0)
    tree[".github/stepwise.yml"] = yaml.safe_dump(
        {"validate": ["python -c pass"], "allow_commands": ["python"], "batch_size": 1,
         "batches_per_milestone": batches + 1, "require_plan_approval": False}, sort_keys=False)
    repo = gh.add_repo(OWNER, f"step-{files}", tree)
    grow_branch(repo.path, repo.default_branch, max(files - len(tree), 0))
    gh.add_issue(repo, ISSUE_TITLE, ISSUE_BODY, user=MAINTAINER)
    gh.set_permission(repo, MAINTAINER, "maintain")
    payload = make_event("issues.labeled", repo=repo, issue_number=1, sender=MAINTAINER,
                         label="stepwise")
    store = RedisStore(connection)
    busy0 = cpu_busy()
    start = time.monotonic()
    response = deliver(url, "issues", payload, secret=SECRET, delivery_id=f"label-{files}")
    if response.status_code != 202:
        raise RuntimeError(f"label delivery answered {response.status_code}")
    with (logs / f"worker-{files}.log").open("wb") as out:
        proc = subprocess.Popen([str(STEPWISE), "worker", "--burst"], env=env, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True, cwd=logs)
    job = None
    try:
        while time.monotonic() < start + timeout_s:
            job = store.find(repo.full_name, 1)
            if job is not None and job.status in TERMINAL:
                size.wall_s = time.monotonic() - start
                break
            if proc.poll() is not None:
                break
            time.sleep(0.2)
    finally:
        busy1 = cpu_busy()
        stop(proc)
    size.cpu_busy = (busy1[0] - busy0[0]) / max(busy1[1] - busy0[1], 1)
    job = store.find(repo.full_name, 1)
    size.status = job.status.value if job is not None else "missing"
    if job is not None:
        batch_spans(job, size)
    return size


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.server_step", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,20000,100000", help="tracked files, comma list")
    parser.add_argument("--batches", type=int, default=6, help="one-line batches per job")
    parser.add_argument("--timeout", type=float, default=900.0, help="bound per size, seconds")
    options = parser.parse_args()
    sizes = sorted({min(max(int(s), 20), 500_000) for s in options.sizes.split(",") if s})
    batches = min(max(options.batches, 2), 30)
    print(f"server step: {machine_facts()}; load average {os.getloadavg()[0]:.1f}", flush=True)
    print(f"one `replace` job of {batches} one-line batches per size, validated by "
          "`python -c pass`; 1 `stepwise worker --burst`", flush=True)
    base = Path(tempfile.mkdtemp(prefix="stepwise-bench-step-"))
    results = []
    try:
        (base / "logs").mkdir()
        with running_redis() as redis_url, FakeGitHub(root=base / "github") as gh:
            connection = redis.Redis.from_url(redis_url)
            values = dict(app_id=gh.app_id, private_key=gh.private_key_pem,
                          webhook_secret=SECRET, redis_url=redis_url,
                          github_api_url=gh.base_url, workdir=base / "work",
                          **lift_write_limits(gh))
            env = stepwise_env(**values)
            settings = Settings(**values)  # type: ignore[arg-type]
            with served(create_app(settings, redis.Redis.from_url(redis_url))) as url:
                for files in sizes:
                    result = run_size(gh, connection, url, env, base / "logs", files, batches,
                                      options.timeout)
                    results.append(result)
                    print(f"  {files:>7} files: {result.status}, {result.wall_s:.1f} s",
                          flush=True)
            connection.close()
    finally:
        shutil.rmtree(base, ignore_errors=True)
    report(results)


def report(results: list[Size]) -> None:
    print()
    print(f"{'files':>7} {'status':>9} {'1st batch s':>11} {'per batch s':>11} "
          f"{'attempt s':>9} {'valid. s':>8} {'cpu busy':>8} {'ratio':>6}")
    base = results[0].per_batch if results else float("nan")
    for r in results:
        attempt = statistics.median(r.attempts[1:]) if len(r.attempts) > 1 else float("nan")
        print(f"{r.files:>7} {r.status:>9} {r.first_s:>11.2f} {r.per_batch:>11.2f} "
              f"{attempt:>9.2f} {r.validation_s:>8.2f} {r.cpu_busy:>8.0%} "
              f"{r.per_batch / base:>6.2f}")
    if len(results) > 1 and all(r.status == JobStatus.COMPLETED.value for r in results):
        ratio = results[-1].per_batch / base
        print(f"engine time per batch, {results[-1].files:,} files / {results[0].files:,} files"
              f" = {ratio:.2f} (target <= {TARGET_RATIO}): "
              f"{'met' if ratio <= TARGET_RATIO else 'MISSED'}")
    else:
        print("ratio: not measured (a job did not complete; see statuses)")


if __name__ == "__main__":
    main()
