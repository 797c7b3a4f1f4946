"""Benchmark: a 10,000-batch job beside a 10-batch one (issue 19, "Long jobs").

    .venv/bin/python -m bench.long_job [--batches 10000] [--repeats 200]

Prints, for the file store and the Redis store, the median cost of recording one step (an
attempt and the batch saved with `touched=[k]`) in the long job against the 10-batch baseline
(target <= 1.2x); the progress card's length with the job in the middle and at the end against
GitHub's 65,536-character body limit; and the peak memory of a fresh process that loads the long
job, records 200 steps and renders the card (target < 200 MB).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ["STEPWISE_STORE_CHECK"] = "0"  # measure the production path

from bench.state_cost import StepCost, cost_row, median_step, sample_job  # noqa: E402
from jobs.kernel.model import BatchStatus  # noqa: E402
from jobs.notes.progress import render_card  # noqa: E402

BODY_LIMIT = 65_536


def store_ratios(batches: int, repeats: int) -> dict[str, tuple[StepCost, StepCost]]:
    import redis

    from bot.plumbing.redis_store import RedisStore
    from jobs.adapters.store import FileStore
    from tests.kit.redis_server import running_redis

    figures: dict[str, tuple[StepCost, StepCost]] = {}
    with tempfile.TemporaryDirectory() as state:
        times = []
        for size in (10, batches):
            store = FileStore(Path(state) / str(size))
            job = sample_job(size)
            store.save(job)
            times.append(median_step(job, lambda j, t, s=store: s.save(j, touched=t), repeats))
        figures["file"] = (times[0], times[1])
    with running_redis() as url:
        client = redis.Redis.from_url(url)
        times = []
        for size in (10, batches):
            store = RedisStore(client)
            job = sample_job(size)
            store.save(job)
            times.append(median_step(job, lambda j, t, s=store: s.save(j, touched=t), repeats))
        figures["redis"] = (times[0], times[1])
    return figures


def card_lengths(batches: int) -> tuple[int, int]:
    """The card's length with the job half done, and when every batch is finished."""
    job = sample_job(batches)
    for batch in job.batches[: batches // 2]:
        batch.status = BatchStatus.COMPLETED
        batch.commit = "c" * 40
    middle = len(render_card(job))
    for batch in job.batches:
        batch.status = BatchStatus.COMPLETED
        batch.commit = "c" * 40
    return middle, len(render_card(job))


def peak_memory_mb(batches: int) -> float:
    code = (
        "import os, resource, sys, tempfile; sys.path.insert(0, sys.argv[1])\n"
        "os.environ['STEPWISE_STORE_CHECK'] = '0'\n"
        "from pathlib import Path\n"
        "from bench.state_cost import sample_job, one_step\n"
        "from jobs.notes.progress import render_card\n"
        "from jobs.adapters.store import FileStore\n"
        "n = int(sys.argv[2])\n"
        "d = tempfile.mkdtemp(); store = FileStore(Path(d)); store.save(sample_job(n))\n"
        "job = store.load(n)\n"
        "for i in range(200): one_step(job, lambda j, t: store.save(j, touched=t), i + 1)\n"
        "render_card(job)\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n"
    )
    done = subprocess.run([sys.executable, "-c", code, str(ROOT), str(batches)],
                          capture_output=True, text=True, check=True)
    return int(done.stdout.strip().splitlines()[-1]) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=200)
    args = parser.parse_args()
    n = args.batches
    print(f"long job: {n:,} batches against 10 (median of {args.repeats} steps); Python "
          f"{sys.version.split()[0]}, {os.cpu_count()} cores")
    print(f"{'store':<8}{'10 batches':>14}{f'{n:,} batches':>18}{'ratio':>8}  target <= 1.2"
          f"   CPU: 10, {n:,} batches, ratio")
    for name, (small, large) in store_ratios(n, args.repeats).items():
        print(f"{name:<8}" + cost_row(small, large, 15))
    middle, end = card_lengths(n)
    for label, length in (("half done", middle), ("finished", end)):
        print(f"card, {label}: {length:,} characters ({length / BODY_LIMIT:.0%} of GitHub's "
              f"{BODY_LIMIT:,})  {'met' if length < BODY_LIMIT else 'NOT met'}")
    memory = peak_memory_mb(n)
    print(f"peak memory, {n:,}-batch job: {memory:.0f} MB  target < 200 MB  "
          f"{'met' if memory < 200 else 'NOT met'}")


if __name__ == "__main__":
    main()
