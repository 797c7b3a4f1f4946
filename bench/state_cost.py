"""Benchmark 4: the cost of recording one batch's progress in a 10- and a 1,000-batch job.

    .venv/bin/python -m bench.state_cost [--repeats 200]

For the file store and the Redis store (a real redis-server on a free loopback port) it times
what the engine does per step (an attempt appended and the batch saved with `touched=[k]`),
prints the median per store and size and the 1,000/10 ratio (target <= 1.2), the same for this
process's CPU time in a step (what the load and the disk's fsync latency move least), and the peak
memory of a process that loads and advances a 1,000-batch job (target < 200 MB).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ["STEPWISE_STORE_CHECK"] = "0"  # measure the production path

from jobs.inputs.config import load_config  # noqa: E402
from jobs.inputs.spec import parse_spec  # noqa: E402
from jobs.kernel.job import Batch, Job  # noqa: E402
from jobs.kernel.model import BatchStatus  # noqa: E402
from jobs.kernel.records import Attempt, CommandEvidence, Event  # noqa: E402

NOW = datetime(2026, 11, 30, tzinfo=UTC)
SPEC = "```stepwise\nrecipe: replace\npaths: ['src/**/*.py']\nfind: ['x']\nreplace: 'y'\n```\n"


def sample_job(batches: int) -> Job:
    """A job whose batches look like real finished ones: two attempts with evidence each."""
    spec = parse_spec(SPEC)
    evidence = CommandEvidence(argv=["python", "-m", "pytest", "-q"], exit_code=0,
                               duration_s=1.5, output_tail="." * 200 + "\n1 passed\n",
                               output_lines=40)
    made = [
        Batch(number=k, milestone=(k - 1) // 4 + 1,
              files=[f"src/pkg{k % 50}/module_{k}_{i}.py" for i in range(5)],
              status=BatchStatus.COMPLETED if k % 3 else BatchStatus.PENDING,
              commit="c" * 40 if k % 3 else None,
              attempts=[Attempt(number=a, started_at=NOW, finished_at=NOW,
                                outcome="validated", commands=[evidence, evidence])
                        for a in (1, 2)])
        for k in range(1, batches + 1)
    ]
    history = [Event(at=NOW, kind="batch", message=f"batch {k} committed", batch=k)
               for k in range(1, batches + 1) for _ in range(3)]
    return Job(events=history, id=f"{batches}-bench", number=batches, title="bench", repo="o/r",
               created_at=NOW, updated_at=NOW, spec=spec, spec_digest=spec.digest(),
               spec_text=SPEC, config=load_config(None), base_branch="main", base_sha="a" * 40,
               branch="stepwise/issue-1", head_sha="b" * 40, note_path="n.md", batches=made)


class StepCost(NamedTuple):
    """A step's wall seconds and this process's CPU seconds in it: on a shared machine the wall
    clock moves with the load and the disk's fsync latency, the CPU much less."""

    wall: float
    cpu: float


def one_step(job: Job, save: Callable[[Job, list[int]], object], k: int) -> StepCost:
    """What a step records: a new attempt on batch k, then the save naming only that batch."""
    batch = job.batches[k - 1]
    started, cpu = time.perf_counter(), time.process_time()
    batch.attempts.append(Attempt(number=len(batch.attempts) + 1, started_at=NOW))
    job.events.append(Event(at=NOW, kind="attempt", message=f"batch {k} attempt", batch=k))
    save(job, [k])
    return StepCost(time.perf_counter() - started, time.process_time() - cpu)


def median_step(job: Job, save: Callable[[Job, list[int]], object], repeats: int) -> StepCost:
    save(job, [])  # first write: everything
    steps = [one_step(job, save, (i % len(job.batches)) + 1) for i in range(repeats)]
    return StepCost(statistics.median(s.wall for s in steps),
                    statistics.median(s.cpu for s in steps))


def file_store_figures(repeats: int) -> dict[int, StepCost]:
    from jobs.adapters.store import FileStore

    figures = {}
    for size in (10, 1000):
        with tempfile.TemporaryDirectory() as state:
            store = FileStore(Path(state))
            job = sample_job(size)
            store.save(job)
            figures[size] = median_step(job, lambda j, t, s=store: s.save(j, touched=t), repeats)
    return figures


def redis_store_figures(repeats: int) -> dict[int, StepCost]:
    import redis

    from bot.plumbing.redis_store import RedisStore
    from tests.kit.redis_server import running_redis

    figures = {}
    with running_redis() as url:
        client = redis.Redis.from_url(url)
        for size in (10, 1000):
            store = RedisStore(client)
            job = sample_job(size)
            store.save(job)
            figures[size] = median_step(job, lambda j, t, s=store: s.save(j, touched=t), repeats)
    return figures


def cost_row(small: StepCost, large: StepCost, width: int) -> str:
    """The wall figures, their ratio against the target, then the CPU figures and theirs."""
    ratio = large.wall / small.wall
    return (f"{small.wall * 1e3:>11.2f} ms{large.wall * 1e3:>{width}.2f} ms{ratio:>8.2f}  "
            f"{'met' if ratio <= 1.2 else 'NOT met':<8}      {small.cpu * 1e3:.2f}, "
            f"{large.cpu * 1e3:.2f} ms, {large.cpu / small.cpu:.2f}")


def peak_memory_mb() -> float:
    """Peak RSS of a fresh process that loads a 1,000-batch job and records 200 steps."""
    code = (
        "import os, resource, sys, tempfile; sys.path.insert(0, sys.argv[1])\n"
        "os.environ['STEPWISE_STORE_CHECK'] = '0'\n"
        "from pathlib import Path\n"
        "from bench.state_cost import sample_job, one_step\n"
        "from jobs.adapters.store import FileStore\n"
        "d = tempfile.mkdtemp(); store = FileStore(Path(d)); store.save(sample_job(1000))\n"
        "job = store.load(1000)\n"
        "for i in range(200): one_step(job, lambda j, t: store.save(j, touched=t), i + 1)\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n"
    )
    done = subprocess.run([sys.executable, "-c", code, str(ROOT)], capture_output=True,
                          text=True, check=True)
    return int(done.stdout.strip().splitlines()[-1]) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=200)
    args = parser.parse_args()
    print(f"state cost per step (median of {args.repeats}); Python "
          f"{sys.version.split()[0]}, {os.cpu_count()} cores")
    print(f"{'store':<8}{'10 batches':>14}{'1,000 batches':>16}{'ratio':>8}  target <= 1.2"
          "   CPU: 10, 1,000 batches, ratio")
    for name, measure in (("file", file_store_figures), ("redis", redis_store_figures)):
        figures = measure(args.repeats)
        print(f"{name:<8}" + cost_row(figures[10], figures[1000], 13))
    memory = peak_memory_mb()
    print(f"peak memory, 1,000-batch job: {memory:.0f} MB  target < 200 MB  "
          f"{'met' if memory < 200 else 'NOT met'}")
    self_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"(this benchmark process peaked at {self_rss:.0f} MB)")


if __name__ == "__main__":
    main()
